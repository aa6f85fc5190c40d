// What the detectors read of one rank besides its store, analyses and step
// attribution: the GPU timeline and the host call index and tree. Built once
// per rank, by the diagnosis of a trace set or of one rank alone.
#pragma once

#include <memory>

#include "analysis/gpu_timeline.h"
#include "analysis/rank_analysis.h"
#include "diagnose/detector.h"
#include "diagnose/diagnose_options.h"
#include "diagnose/host_index.h"
#include "diagnose/host_tree.h"
#include "diagnose/step_attribution.h"
#include "trace/event_store.h"
#include "whatif/profiler_cost.h"
#include "whatif/rank_critical_path.h"
#include "whatif/rank_replay.h"
#include "whatif/step_graph.h"

namespace stepscope::diagnose {

struct RankInputs {
  analysis::GpuTimeline timeline;
  HostIndex host;
  std::unique_ptr<HostTree> tree;
};

RankInputs prepare_rank(const trace::EventStore& store, const DiagnoseOptions& options);

// The rank's steps attributed (step_attribution.h) from its inputs.
RankAttribution attribute_rank(const RankInputs& in, const trace::EventStore& store,
                               const analysis::RankAnalysis& analysis);

// The rank as the detectors see it (pointers to the arguments; the peaks:
// options.peaks_override, else the hardware table's row for its GPU).
RankView view_of(const RankInputs& in, const RankAttribution& attribution, const trace::EventStore& store,
                 const analysis::RankAnalysis& analysis, const DiagnoseOptions& options);

// The rank's replay (docs/whatif.md): its step graph and, where the replay
// reproduces the measured steps, the run without the profiler.
struct RankReplayState {
  whatif::StepGraph graph;
  whatif::UnprofiledBaseline baseline;  // the graph's input without the profiler's host cost
  bool faithful = false;                // replayed within whatif::kFidelityLimitPct, with an estimate
  whatif::RankReplay summary;           // what the report prints of it
};
RankReplayState replay_rank(const RankInputs& in, const trace::EventStore& store,
                            const analysis::RankAnalysis& analysis, const DiagnoseOptions& options);

// What the reports show of the rank's replay: its summary and each step's
// critical path; with `replay` null (not replayed), the notes saying so.
void report_replay(const trace::EventStore& store, const RankInputs& in, const RankReplayState* replay,
                   whatif::RankReplay& summary, whatif::RankCriticalPath& path);

}  // namespace stepscope::diagnose
