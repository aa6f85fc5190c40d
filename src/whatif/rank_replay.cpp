#include "whatif/rank_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/saturating.h"

namespace stepscope::whatif {

RankReplay summarize_replay(int64_t rank, const StepGraph& g) {
  RankReplay r;
  r.rank = rank;
  r.host_marks = static_cast<int64_t>(g.mark_count());
  r.gpu_nodes = static_cast<int64_t>(g.gpu_dur_ns.size());
  for (const Edge& e : g.edges) ++r.edges[static_cast<size_t>(e.kind)];
  for (const HostMark& m : g.marks) r.blocking_calls += m.blocking;
  r.launch_latency_ns = g.launch_latency_ns;
  r.stream_gap_ns = g.stream_gap_ns;
  r.sync_release_ns = g.sync_release_ns;
  r.notes = g.notes;
  if (!g.usable()) {
    if (g.order.empty()) r.notes.push_back("nothing to replay (no host marks or GPU work)");
    return r;
  }
  const std::vector<StepWindow> measured = recorded_windows(g);
  const ReplayResult replayed = replay(g, recorded_input(g));
  if (measured.size() != replayed.windows.size()) {
    r.notes.push_back(fmt::format("the replay has {} step windows where the recorded run has {}",
                                  replayed.windows.size(), measured.size()));
    return r;
  }
  r.replayed = true;
  if (g.steps.empty())
    r.notes.push_back("no ProfilerStep#N in the trace: no step window to replay (the attribution's whole-trace window is not "
                      "replayed)");
  for (size_t i = 0; i < measured.size(); ++i) {
    StepFidelity f{measured[i].step, measured[i].wall_ns(), replayed.windows[i].wall_ns()};
    r.max_abs_error_pct = std::max(r.max_abs_error_pct, std::abs(f.error_pct()));
    r.steps.push_back(f);
  }
  if (!measured.empty()) {
    const int64_t lo = measured.front().start_ns, hi = measured.back().end_ns;
    for (size_t v = 0; v < g.node_count(); ++v) {
      if (g.recorded_ns[v] < lo || g.recorded_ns[v] >= hi) continue;
      int64_t& sum = g.is_gpu(static_cast<uint32_t>(v)) ? r.gpu_residual_ns : r.host_residual_ns;
      sum = analysis::saturating_add(sum, g.residual_ns[v]);
    }
  }
  if (r.max_abs_error_pct > kFidelityLimitPct)
    r.notes.push_back(fmt::format("the replay is off by up to {:.1f}% of a step: savings keep the detectors' bounds",
                                  r.max_abs_error_pct));
  return r;
}

}  // namespace stepscope::whatif
