#include "whatif/replay.h"

#include <algorithm>

#include "analysis/saturating.h"
#include "whatif/longest_path.h"

namespace stepscope::whatif {

using analysis::saturating_add;

std::vector<EndedWindow> step_windows_with_ends(const StepGraph& g, const std::vector<int64_t>& time,
                                                const std::vector<int64_t>& dur) {
  std::vector<EndedWindow> w;
  for (size_t i = 0; i < g.steps.size(); ++i) {
    const StepGraph::Step& s = g.steps[i];
    if (s.start_mark == kNoNode || s.end_mark == kNoNode) continue;
    int64_t start = time[s.start_mark];
    int64_t end = time[s.end_mark];
    uint32_t node = s.end_mark;
    if (i + 1 < g.steps.size() && g.steps[i + 1].start_mark != kNoNode && time[g.steps[i + 1].start_mark] < end) {
      node = g.steps[i + 1].start_mark;
      end = time[node];
    }
    if (i + 1 == g.steps.size())
      for (uint32_t k : s.activities) {
        const int64_t e = saturating_add(time[g.gpu_node(k)], dur[k]);
        if (e > end) end = e, node = g.gpu_node(k);
      }
    if (!w.empty()) start = std::max(start, w.back().window.end_ns);
    if (end > start) w.push_back({{s.step, start, end}, node});
  }
  return w;
}

std::vector<StepWindow> step_windows(const StepGraph& g, const std::vector<int64_t>& time,
                                     const std::vector<int64_t>& dur) {
  std::vector<StepWindow> w;
  for (const EndedWindow& e : step_windows_with_ends(g, time, dur)) w.push_back(e.window);
  return w;
}

ReplayInput recorded_input(const StepGraph& g) {
  ReplayInput in;
  in.gpu_dur_ns = g.gpu_dur_ns;
  in.edge_w_ns.reserve(g.edges.size());
  for (const Edge& e : g.edges) in.edge_w_ns.push_back(e.w_ns);
  in.residual_ns = g.residual_ns;
  return in;
}

ReplayResult replay(const StepGraph& g, const ReplayInput& in) {
  ReplayResult r;
  // Work's successors wait for its end; a launch and an anchor leave from a
  // host mark, whose time is the point itself.
  longest_path(
      g, in.edge_w_ns, in.residual_ns, kDropped, kNoEdge,
      [&](uint32_t u, uint32_t) {
        return g.is_gpu(u) ? saturating_add(r.time_ns[u], in.gpu_dur_ns[g.activity_of(u)]) : r.time_ns[u];
      },
      r.time_ns, r.binding);
  r.windows = step_windows(g, r.time_ns, in.gpu_dur_ns);
  for (const StepWindow& w : r.windows) r.total_ns = saturating_add(r.total_ns, w.wall_ns());
  return r;
}

std::vector<StepWindow> recorded_windows(const StepGraph& g) { return step_windows(g, g.recorded_ns, g.gpu_dur_ns); }

}  // namespace stepscope::whatif
