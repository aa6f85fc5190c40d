// Per-rank analyses on a pool of threads: ranks are independent, so each
// worker takes the next rank until none is left.
#pragma once

#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/rank_analysis.h"
#include "trace/event_store.h"

namespace stepscope::pipeline {

// analyze_rank over every store, `threads` at a time (0 = hardware threads).
std::vector<analysis::RankAnalysis> analyze_ranks_parallel(const std::vector<const trace::EventStore*>& stores,
                                                           const analysis::AnalysisOptions& options,
                                                           unsigned threads);

}  // namespace stepscope::pipeline
