#include "whatif/job_critical_path.h"

#include <algorithm>
#include <map>

#include "analysis/saturating.h"
#include "whatif/rank_critical_path.h"  // kTopPathSegments

namespace stepscope::whatif {

namespace {

using analysis::saturating_add;
using analysis::saturating_sub;

// Node ids and categories of the job graph's nodes, per rank.
struct Categories {
  const JobGraph& g;
  std::vector<std::vector<PathCategory>> host;  // per rank: host_categories() of its graph

  explicit Categories(const JobGraph& jg) : g(jg) {
    for (const JobGraph::Rank& r : g.ranks) host.push_back(host_categories(*r.graph));
  }
  // The node's id in its rank's graph, or kNoNode (a join, a collective's end, a host collective's start).
  uint32_t local(uint32_t v) const {
    const uint32_t i = g.rank_of[v];
    if (i == kNoRank) return kNoNode;
    const JobGraph::Rank& r = g.ranks[i];
    return v >= r.first_node && v - r.first_node < r.graph->node_count() ? v - r.first_node : kNoNode;
  }
  PathCategory gpu(uint32_t v) const {
    const JobGraph::Rank& r = g.ranks[g.rank_of[v]];
    const uint32_t u = local(v);
    if (r.timeline == nullptr || u == kNoNode) return PathCategory::kGpuCompute;
    return gpu_category(r.timeline->activities[r.graph->activity_of(u)].cls);
  }
  // CPU time ending at host point v of rank i: a mark's stretch, else (a host
  // collective's start or end) that of the stretch between marks it lies in.
  PathCategory host_stretch(uint32_t i, uint32_t v) const {
    const std::vector<PathCategory>& cat = host[i];
    const uint32_t u = local(v);
    if (u != kNoNode && u < cat.size()) return cat[u];
    const StepGraph& sg = *g.ranks[i].graph;
    const int64_t t = saturating_sub(g.recorded_ns[v], g.ranks[i].shift_ns);
    const auto it = std::lower_bound(sg.marks.begin(), sg.marks.end(), t,
                                     [](const HostMark& m, int64_t x) { return m.t_ns < x; });
    const auto k = static_cast<size_t>(it - sg.marks.begin());
    return k > 0 && k < cat.size() ? cat[k] : PathCategory::kHostOther;
  }
  PathCategory edge(uint32_t e, uint32_t rank_index) const {
    const Edge& edge = g.edges[e];
    switch (g.edge_kind[e]) {
      case JobEdgeKind::kLocal:
        return edge.kind == EdgeKind::kHostOrder ? host_stretch(rank_index, edge.to) : edge_category(edge.kind, PathCategory::kResidual);
      case JobEdgeKind::kHostCall: return host_stretch(rank_index, edge.to);
      case JobEdgeKind::kArrival:
      case JobEdgeKind::kRelease: break;
    }
    // A collective's transfer: GPU communication, or for a host collective
    // (gloo on CPU) CPU time inside a framework op, as on one rank.
    const uint32_t arrival = g.edge_kind[e] == JobEdgeKind::kArrival ? edge.from : kNoNode;
    return arrival != kNoNode && !g.gpu[arrival] ? PathCategory::kHostOther : PathCategory::kGpuCommunication;
  }
};

JobStepPath walk(const JobGraph& g, const JobReplayInput& in, const JobReplayResult& r, const Categories& cat,
                 const std::vector<uint32_t>& instance_of, int64_t step, uint32_t rank_index, size_t window) {
  const StepWindow& w = r.windows[rank_index][window];
  JobStepPath p;
  p.step = step;
  p.end_index = rank_index;
  p.start_ns = w.start_ns;
  p.end_ns = w.end_ns;
  p.by_rank_ns.assign(g.ranks.size(), 0);
  // As on one rank (critical_path.cpp): each segment runs from its natural
  // start, clipped to the window, to where the one after it began.
  int64_t cur = w.end_ns;
  uint32_t on = rank_index;  // the rank the path is on; a join has none, its arrival edge stays on the waiting rank
  auto emit = [&](int64_t lo, SegmentKind kind, PathCategory c) {
    lo = std::max(lo, w.start_ns);
    if (lo >= cur) return;
    p.segments.push_back({on, lo, cur, kind, c});
    cur = lo;
  };
  uint32_t v = r.window_end[rank_index][window];
  bool from_start = false;  // reached through an arrival edge: left from the collective kernel's start
  while (cur > w.start_ns) {
    if (g.rank_of[v] != kNoRank) on = g.rank_of[v];
    if (g.gpu[v] && !from_start) emit(r.time_ns[v], SegmentKind::kGpuWork, cat.gpu(v));
    if (cur <= w.start_ns) break;
    const uint32_t e = r.binding[v];
    if (e == kNoEdge) {
      emit(w.start_ns, SegmentKind::kResidual, PathCategory::kResidual);
      break;
    }
    const Edge& edge = g.edges[e];
    const bool arrival = g.edge_kind[e] == JobEdgeKind::kArrival;
    const int64_t from =
        g.gpu[edge.from] && !arrival ? saturating_add(r.time_ns[edge.from], in.dur_ns[edge.from]) : r.time_ns[edge.from];
    emit(saturating_add(from, in.edge_w_ns[e]), SegmentKind::kResidual, PathCategory::kResidual);
    emit(from, SegmentKind::kEdge, cat.edge(e, on));
    const uint32_t to = g.rank_of[edge.from];
    if (arrival && to != on && instance_of[v] != kNoNode) {
      const JobCollective& c = g.collectives[instance_of[v]];
      const int64_t wait = saturating_sub(r.time_ns[c.arrival[to]], r.time_ns[c.arrival[on]]);
      p.crossings.push_back({instance_of[v], on, to, r.time_ns[edge.from], std::max<int64_t>(0, wait),
                             last_arrival(g, r, instance_of[v]).wait_ns});
    }
    from_start = arrival;
    v = edge.from;
  }
  std::reverse(p.segments.begin(), p.segments.end());
  std::reverse(p.crossings.begin(), p.crossings.end());
  for (const JobPathSegment& s : p.segments) {
    p.by_category_ns[static_cast<size_t>(s.category)] += s.dur_ns();
    p.by_rank_ns[s.rank_index] += s.dur_ns();
    if (!p.runs.empty() && p.runs.back().rank_index == s.rank_index && p.runs.back().category == s.category &&
        p.runs.back().end_ns == s.start_ns)
      p.runs.back().end_ns = s.end_ns;
    else
      p.runs.push_back({s.rank_index, s.start_ns, s.end_ns, s.category});
  }
  return p;
}

}  // namespace

std::vector<JobStepPath> job_critical_paths(const JobGraph& g, const JobReplayInput& in, const JobReplayResult& r) {
  const Categories cat(g);
  std::vector<uint32_t> instance_of(g.node_count(), kNoNode);  // a join -> its collective instance
  for (size_t c = 0; c < g.collectives.size(); ++c) instance_of[g.collectives[c].join] = static_cast<uint32_t>(c);
  // Per step number: the rank whose window ends last, and which window it is.
  std::map<int64_t, std::pair<uint32_t, size_t>> last;
  for (uint32_t i = 0; i < r.windows.size(); ++i)
    for (size_t k = 0; k < r.windows[i].size(); ++k) {
      const StepWindow& w = r.windows[i][k];
      auto [it, added] = last.try_emplace(w.step, i, k);
      if (!added && w.end_ns > r.windows[it->second.first][it->second.second].end_ns) it->second = {i, k};
    }
  std::vector<JobStepPath> paths;
  for (const auto& [step, at] : last) paths.push_back(walk(g, in, r, cat, instance_of, step, at.first, at.second));
  return paths;
}

JobCriticalPath summarize_job_critical_path(const JobGraph& g) {
  JobCriticalPath out;
  if (!g.usable()) {
    out.notes.push_back("no job critical path: the ranks are not replayed as one job (see job_replay.notes)");
    return out;
  }
  const JobReplayInput in = job_recorded_input(g);
  const JobReplayResult r = replay_job(g, in);
  for (const JobGraph::Rank& rk : g.ranks) out.ranks.push_back(rk.rank);
  out.total_by_rank_ns.assign(g.ranks.size(), 0);
  out.crossed_to.assign(g.ranks.size(), 0);
  auto local = [&](uint32_t i, int64_t t) { return saturating_sub(t, g.ranks[i].shift_ns); };
  for (const JobStepPath& p : job_critical_paths(g, in, r)) {
    JobStepSummary s;
    s.step = p.step;
    s.end_rank = g.ranks[p.end_index].rank;
    s.start_ns = local(p.end_index, p.start_ns);
    s.wall_ns = p.wall_ns();
    s.by_category_ns = p.by_category_ns;
    s.by_rank_ns = p.by_rank_ns;
    std::vector<const JobPathRun*> longest;
    for (const JobPathRun& run : p.runs) longest.push_back(&run);
    const size_t top = std::min(kTopPathSegments, longest.size());
    std::partial_sort(longest.begin(), longest.begin() + static_cast<std::ptrdiff_t>(top), longest.end(),
                      [](const JobPathRun* a, const JobPathRun* b) {
                        return a->dur_ns() != b->dur_ns() ? a->dur_ns() > b->dur_ns() : a->start_ns < b->start_ns;
                      });
    for (size_t k = 0; k < top; ++k)
      s.top.push_back({g.ranks[longest[k]->rank_index].rank, longest[k]->category,
                       local(longest[k]->rank_index, longest[k]->start_ns), longest[k]->dur_ns()});
    for (const RankCrossing& c : p.crossings) {
      const JobCollective& jc = g.collectives[c.instance];
      s.crossings.push_back({jc.op, jc.ordinal, g.ranks[c.from_index].rank, g.ranks[c.to_index].rank,
                             local(c.to_index, c.at_ns), c.wait_ns, c.max_wait_ns});
      ++out.crossed_to[c.to_index];
      ++out.crossings;
    }
    for (size_t c = 0; c < out.total_ns.size(); ++c) out.total_ns[c] = saturating_add(out.total_ns[c], p.by_category_ns[c]);
    for (size_t i = 0; i < g.ranks.size(); ++i)
      out.total_by_rank_ns[i] = saturating_add(out.total_by_rank_ns[i], p.by_rank_ns[i]);
    out.wall_ns = saturating_add(out.wall_ns, p.wall_ns());
    out.steps.push_back(std::move(s));
  }
  if (out.steps.empty()) out.notes.push_back("no job critical path: no rank has a step window in the job replay");
  return out;
}

}  // namespace stepscope::whatif
