#include "whatif/job_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/saturating.h"
#include "whatif/longest_path.h"
#include "whatif/rank_replay.h"

namespace stepscope::whatif {

using analysis::saturating_add;

JobReplayInput job_recorded_input(const JobGraph& g) {
  JobReplayInput in;
  in.dur_ns = g.dur_ns;
  in.edge_w_ns.reserve(g.edges.size());
  for (const Edge& e : g.edges) in.edge_w_ns.push_back(e.w_ns);
  in.residual_ns = g.residual_ns;
  return in;
}

JobReplayResult replay_job(const JobGraph& g, const JobReplayInput& in) {
  JobReplayResult r;
  // An arrival is the start of the rank's collective; other successors of
  // GPU work wait for its end.
  longest_path(
      g, in.edge_w_ns, in.residual_ns, kDropped, kNoEdge,
      [&](uint32_t u, uint32_t i) {
        const bool from_end = g.gpu[u] && g.edge_kind[i] != JobEdgeKind::kArrival;
        return from_end ? saturating_add(r.time_ns[u], in.dur_ns[u]) : r.time_ns[u];
      },
      r.time_ns, r.binding);
  // Each rank's windows by the one-rank rule, its collective kernels lasting
  // to the rank's end of the collective.
  r.windows.resize(g.ranks.size());
  r.window_end.resize(g.ranks.size());
  std::vector<std::vector<int64_t>> dur(g.ranks.size());
  std::vector<uint32_t> end_of(g.node_count(), kNoNode);  // a collective kernel's node -> the rank's end of it
  for (size_t i = 0; i < g.ranks.size(); ++i) {
    const StepGraph& sg = *g.ranks[i].graph;
    dur[i].resize(sg.gpu_dur_ns.size());
    for (size_t k = 0; k < sg.gpu_dur_ns.size(); ++k) dur[i][k] = in.dur_ns[g.node(i, sg.gpu_node(k))];
  }
  for (const JobCollective& c : g.collectives)
    for (size_t i = 0; i < c.arrival.size(); ++i) {
      const uint32_t a = c.arrival[i];
      if (!g.gpu[a]) continue;
      const StepGraph& sg = *g.ranks[i].graph;
      dur[i][sg.activity_of(a - g.ranks[i].first_node)] = r.time_ns[c.end[i]] - r.time_ns[a];
      end_of[a] = c.end[i];
    }
  for (size_t i = 0; i < g.ranks.size(); ++i) {
    const StepGraph& sg = *g.ranks[i].graph;
    const auto first = r.time_ns.begin() + g.ranks[i].first_node;
    const std::vector<int64_t> time(first, first + static_cast<std::ptrdiff_t>(sg.node_count()));
    for (const EndedWindow& w : step_windows_with_ends(sg, time, dur[i])) {
      const uint32_t v = g.node(i, w.end_node);
      r.windows[i].push_back(w.window);
      r.window_end[i].push_back(end_of[v] != kNoNode ? end_of[v] : v);
    }
  }
  return r;
}

LastArrival last_arrival(const JobGraph& g, const JobReplayResult& r, size_t instance) {
  const JobCollective& c = g.collectives[instance];
  LastArrival out;
  int64_t earliest = INT64_MAX, latest = INT64_MIN;
  for (size_t i = 0; i < c.arrival.size(); ++i) {
    const int64_t t = r.time_ns[c.arrival[i]];
    earliest = std::min(earliest, t);
    if (t > latest) {
      latest = t;
      out.rank_index = i;
    }
  }
  out.rank = g.ranks[out.rank_index].rank;
  out.wait_ns = analysis::saturating_sub(latest, earliest);
  return out;
}

JobReplay summarize_job_replay(const JobGraph& g) {
  JobReplay s;
  s.ranks = static_cast<int64_t>(g.ranks.size());
  s.collectives = static_cast<int64_t>(g.collectives.size());
  s.collective_edges = g.collective_edges;
  s.unmatched_calls = g.unmatched_calls;
  s.notes = g.notes;
  if (!g.usable()) return s;
  const JobReplayResult r = replay_job(g, job_recorded_input(g));
  for (size_t i = 0; i < g.ranks.size(); ++i) {
    const std::vector<StepWindow> measured = recorded_windows(*g.ranks[i].graph);
    if (measured.size() != r.windows[i].size()) {
      s.notes.push_back(fmt::format("rank {}: the job replay has {} step windows where the recorded run has {}",
                                    g.ranks[i].rank, r.windows[i].size(), measured.size()));
      return s;
    }
    for (size_t k = 0; k < measured.size(); ++k) {
      const StepFidelity f{measured[k].step, measured[k].wall_ns(), r.windows[i][k].wall_ns()};
      s.max_abs_error_pct = std::max(s.max_abs_error_pct, std::abs(f.error_pct()));
      ++s.steps;
    }
  }
  s.replayed = true;
  if (s.max_abs_error_pct > kFidelityLimitPct)
    s.notes.push_back(fmt::format("the job replay is off by up to {:.1f}% of a step", s.max_abs_error_pct));
  return s;
}

}  // namespace stepscope::whatif
