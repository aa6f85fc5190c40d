#include "diagnose/rank_inputs.h"

#include "diagnose/rank_gpu.h"
#include "diagnose/replay_graph.h"

namespace stepscope::diagnose {

RankInputs prepare_rank(const trace::EventStore& store, const DiagnoseOptions& options) {
  RankInputs in;
  in.timeline = analysis::build_gpu_timeline(store, options.analysis);
  in.host = build_host_index(store);
  in.tree = std::make_unique<HostTree>(store);
  return in;
}

RankAttribution attribute_rank(const RankInputs& in, const trace::EventStore& store,
                               const analysis::RankAnalysis& analysis) {
  return attribute_steps(store, in.timeline, analysis.steps, in.host);
}

RankView view_of(const RankInputs& in, const RankAttribution& attribution, const trace::EventStore& store,
                 const analysis::RankAnalysis& analysis, const DiagnoseOptions& options) {
  RankView v;
  v.store = &store;
  v.analysis = &analysis;
  v.timeline = &in.timeline;
  v.attribution = &attribution;
  v.host = &in.host;
  v.tree = in.tree.get();
  v.peaks = options.peaks_override ? options.peaks_override : rank_gpu_peaks(store);
  return v;
}

RankReplayState replay_rank(const RankInputs& in, const trace::EventStore& store,
                            const analysis::RankAnalysis& analysis, const DiagnoseOptions& options) {
  RankReplayState r;
  r.graph = build_replay_graph(store, in.timeline, analysis.steps, in.host);
  r.summary = whatif::summarize_replay(store.rank, r.graph);
  whatif::RankReplay& summary = r.summary;
  r.faithful = summary.replayed && !r.graph.steps.empty() && !summary.steps.empty() &&
               summary.max_abs_error_pct <= whatif::kFidelityLimitPct;
  if (!r.faithful) return r;
  const std::optional<double> measured =
      options.unprofiled_step_ms ? options.unprofiled_step_ms : store.meta.unprofiled_step_ms;
  r.baseline = whatif::unprofiled_baseline(r.graph, store, measured);
  auto& u = summary.unprofiled;
  u.estimated = r.baseline.unprofiled_step_ns > 0;
  u.settings = r.baseline.settings;
  u.profiled_step_ns = r.baseline.profiled_step_ns;
  u.unprofiled_step_ns = r.baseline.unprofiled_step_ns;
  u.model_cost_ns = r.baseline.model_cost_ns;
  u.scale = r.baseline.scale;
  u.calibrated = r.baseline.calibrated;
  u.measured_step_ms = r.baseline.measured_step_ms;
  for (const std::string& n : r.baseline.notes) summary.notes.push_back(n);
  r.faithful = u.estimated;
  return r;
}

void report_replay(const trace::EventStore& store, const RankInputs& in, const RankReplayState* replay,
                   whatif::RankReplay& summary, whatif::RankCriticalPath& path) {
  if (replay) {
    summary = replay->summary;
    path = whatif::summarize_critical_path(store.rank, replay->graph, in.timeline, store);
    return;
  }
  constexpr const char* kReplayOff = "not replayed (analyze --no-replay): savings are the detectors' bounds";
  summary = whatif::RankReplay{};
  summary.rank = store.rank;
  summary.notes = {kReplayOff};
  path = whatif::RankCriticalPath{};
  path.rank = store.rank;
  path.notes = {kReplayOff};
}

}  // namespace stepscope::diagnose
