// The pipeline every subcommand that reads traces shares: load one trace set
// (files, folders, globs), analyse each rank in parallel, compare ranks, and
// diagnose. The result owns the stores, so analyses and findings that point
// into them stay valid as long as it lives (it may be moved).
#pragma once

#include <string>
#include <vector>

#include "analysis/analysis_options.h"
#include "analysis/multi_rank.h"
#include "analysis/rank_analysis.h"
#include "diagnose/diagnose.h"
#include "trace/trace_reader.h"
#include "trace/trace_set.h"

namespace stepscope::pipeline {

struct RunOptions {
  trace::ReadOptions read;
  unsigned threads = 0;  // ranks read and analysed in parallel; 0 = hardware threads
  analysis::AnalysisOptions analysis;
  bool diagnose = true;  // false: stop after the analyses (diagnosis stays empty)
  diagnose::DiagnoseOptions diagnosis;  // its `analysis` member is overwritten with `analysis`
};

struct LoadedRun {
  bool ok = false;
  std::string error;  // one line naming the file, when !ok
  trace::TraceSet set;                               // owns the stores
  std::vector<const trace::EventStore*> stores;      // set.ranks, rank order
  std::vector<analysis::RankAnalysis> ranks;         // parallel to stores
  analysis::MultiRankAnalysis multi;                 // empty with fewer than two ranks
  diagnose::Diagnosis diagnosis;                     // empty unless options.diagnose
  double read_seconds = 0;      // wall time to read all ranks, s
  double analysis_seconds = 0;  // wall time of the per-rank and cross-rank analyses, s
  double diagnose_seconds = 0;  // wall time of the diagnosis, s
};

// Also fails when a salvaged file has no whole step left (check_salvaged_steps),
// and adds the salvage and clock warnings to set.warnings.
LoadedRun load_run(const std::vector<std::string>& inputs, const RunOptions& options);

// What truncation (--salvage) left of each rank's steps: a warning per cut
// file (where the cut came, how many steps were dropped and why), and an
// error naming the first file whose steps the cut may all have touched:
// nothing whole remains to analyse per step. Both empty for whole files.
struct SalvageCheck {
  std::vector<std::string> warnings;
  std::string error;
};
SalvageCheck check_salvaged_steps(const std::vector<analysis::RankAnalysis>& ranks);

// analyze_rank over every store, `threads` at a time (0 = hardware threads).
std::vector<analysis::RankAnalysis> analyze_ranks_parallel(const std::vector<const trace::EventStore*>& stores,
                                                           const analysis::AnalysisOptions& options,
                                                           unsigned threads);

}  // namespace stepscope::pipeline
