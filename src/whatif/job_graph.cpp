#include "whatif/job_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "analysis/collective_matching.h"
#include "analysis/saturating.h"

namespace stepscope::whatif {

std::string_view to_string(JobEdgeKind k) {
  switch (k) {
    case JobEdgeKind::kLocal: return "local";
    case JobEdgeKind::kArrival: return "arrival";
    case JobEdgeKind::kRelease: return "release";
    case JobEdgeKind::kHostCall: return "host_call";
  }
  return "unknown";
}

namespace {

using analysis::CollectiveCall;
using analysis::CollectiveSource;
using analysis::saturating_add;
using analysis::saturating_sub;

struct Builder {
  JobGraph& jg;
  std::vector<uint32_t> reroute;         // per node: its collective end, whose time its successors wait for
  std::vector<uint32_t> local_edge_base; // per rank: job index of its graph's first edge (before sorting)

  uint32_t add_node(int64_t recorded, uint32_t rank) {
    jg.recorded_ns.push_back(recorded);
    jg.dur_ns.push_back(0);
    jg.rank_of.push_back(rank);
    jg.gpu.push_back(0);
    reroute.push_back(kNoNode);
    return static_cast<uint32_t>(jg.recorded_ns.size() - 1);
  }
  void add_edge(uint32_t from, uint32_t to, int64_t w, JobEdgeKind kind) {
    jg.edges.push_back({from, to, w, EdgeKind::kHostOrder});
    jg.edge_kind.push_back(kind);
  }
};

// A rank's clock minus the reference rank's, from the alignment.
int64_t clock_offset(const analysis::ClockAlignment& clocks, int64_t rank) {
  for (const analysis::RankClock& rc : clocks.ranks)
    if (rc.rank == rank && rc.matched_calls > 0) return rc.offset_ns;
  return 0;
}

// The host collective [s, e] (graph clock) of rank i: a start node after the
// last mark at or before s, and the next mark at or after e after its end;
// the host-order edges it overlaps lose the overlap (that time is the
// collective's, carried by the start -> join -> end path).
uint32_t add_host_call(Builder& b, size_t i, int64_t s, int64_t e, uint32_t end_node) {
  JobGraph& jg = b.jg;
  const JobGraph::Rank& r = jg.ranks[i];
  const StepGraph& g = *r.graph;
  const uint32_t start_node = b.add_node(saturating_add(s, r.shift_ns), static_cast<uint32_t>(i));
  auto by_time = [](const HostMark& m, int64_t t) { return m.t_ns < t; };
  auto after_s = std::upper_bound(g.marks.begin(), g.marks.end(), s,
                                  [](int64_t t, const HostMark& m) { return t < m.t_ns; });
  const auto first_after = static_cast<uint32_t>(std::lower_bound(g.marks.begin(), g.marks.end(), e, by_time) - g.marks.begin());
  if (after_s != g.marks.begin()) {
    const auto before = static_cast<uint32_t>(after_s - g.marks.begin() - 1);
    b.add_edge(jg.node(i, before), start_node, s - g.marks[before].t_ns, JobEdgeKind::kHostCall);
  }
  if (first_after < g.marks.size())
    b.add_edge(end_node, jg.node(i, first_after), g.marks[first_after].t_ns - e, JobEdgeKind::kHostCall);
  // Host-order edges (mark m-1 -> m) over [s, e].
  for (auto v = static_cast<uint32_t>(std::max<std::ptrdiff_t>(1, after_s - g.marks.begin())); v < g.mark_count(); ++v) {
    if (g.marks[v - 1].t_ns >= e) break;
    const int64_t overlap = std::min(g.marks[v].t_ns, e) - std::max(g.marks[v - 1].t_ns, s);
    for (uint32_t k = g.in_begin[v]; k < g.in_begin[v + 1]; ++k) {
      if (g.edges[k].kind != EdgeKind::kHostOrder) continue;
      int64_t& w = jg.edges[b.local_edge_base[i] + k].w_ns;
      w = std::max<int64_t>(0, w - overlap);
    }
  }
  return start_node;
}

void sort_and_index(JobGraph& jg) {
  const size_t n = jg.node_count();
  std::vector<uint32_t> idx(jg.edges.size());
  for (uint32_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](uint32_t x, uint32_t y) {
    const Edge& a = jg.edges[x];
    const Edge& c = jg.edges[y];
    return a.to != c.to ? a.to < c.to : a.from != c.from ? a.from < c.from : x < y;
  });
  std::vector<Edge> edges;
  std::vector<JobEdgeKind> kinds;
  edges.reserve(idx.size());
  kinds.reserve(idx.size());
  for (uint32_t i : idx) {
    edges.push_back(jg.edges[i]);
    kinds.push_back(jg.edge_kind[i]);
  }
  jg.edges = std::move(edges);
  jg.edge_kind = std::move(kinds);
  jg.in_begin.assign(n + 1, 0);
  for (const Edge& e : jg.edges) ++jg.in_begin[e.to + 1];
  for (size_t i = 0; i < n; ++i) jg.in_begin[i + 1] += jg.in_begin[i];
}

// Recorded time past the latest in-edge bound, as the replay computes bounds.
void residuals(JobGraph& jg) {
  jg.residual_ns.assign(jg.node_count(), 0);
  for (uint32_t v = 0; v < jg.node_count(); ++v) {
    int64_t bound = INT64_MIN;
    for (uint32_t i = jg.in_begin[v]; i < jg.in_begin[v + 1]; ++i) {
      const Edge& e = jg.edges[i];
      const bool from_end = jg.gpu[e.from] && jg.edge_kind[i] != JobEdgeKind::kArrival;
      const int64_t out = from_end ? saturating_add(jg.recorded_ns[e.from], jg.dur_ns[e.from]) : jg.recorded_ns[e.from];
      bound = std::max(bound, saturating_add(out, e.w_ns));
    }
    if (bound != INT64_MIN) jg.residual_ns[v] = std::max<int64_t>(0, saturating_sub(jg.recorded_ns[v], bound));
  }
}

}  // namespace

JobGraph build_job_graph(const std::vector<JobRankInput>& ranks, const analysis::ClockAlignment& clocks) {
  JobGraph jg;
  auto give_up = [&](std::string why) {
    jg = JobGraph{};
    jg.notes.push_back(std::move(why));
    return jg;
  };
  if (ranks.size() < 2) return give_up("one rank: no collective to tie across ranks");
  for (const JobRankInput& r : ranks) {
    if (r.graph == nullptr || r.timeline == nullptr || r.collectives == nullptr)
      return give_up(fmt::format("rank {} has no replay graph: the job is not replayed (each rank's replay stands)", r.rank));
    if (!r.graph->usable())
      return give_up(fmt::format("rank {}'s graph cannot be replayed ({}): the job is not replayed (each rank's "
                                 "replay stands)",
                                 r.rank, r.graph->notes.empty() ? "nothing to replay" : r.graph->notes.front()));
  }
  if (clocks.status == "refused")
    return give_up("the ranks' clocks cannot be compared (no shared synchronizing collective and disjoint time "
                   "ranges): the job is not replayed (each rank's replay stands)");

  int64_t world = 0;
  for (const JobRankInput& r : ranks) world = std::max(world, r.world_size);
  if (world > static_cast<int64_t>(ranks.size()))
    jg.notes.push_back(fmt::format(
        "the traces hold {} of the job's {} ranks (distributedInfo.world_size): collectives are tied among these "
        "only, and a missing rank that arrived last is not seen",
        ranks.size(), world));

  Builder b{jg, {}, {}};
  // Each rank's graph, on the job clock.
  for (size_t i = 0; i < ranks.size(); ++i) {
    const StepGraph& g = *ranks[i].graph;
    const auto first = static_cast<uint32_t>(jg.node_count());
    const int64_t shift = saturating_sub(ranks[i].base_time_ns, clock_offset(clocks, ranks[i].rank));
    jg.ranks.push_back({ranks[i].rank, &g, first, shift});
    for (uint32_t v = 0; v < g.node_count(); ++v) {
      b.add_node(saturating_add(g.recorded_ns[v], shift), static_cast<uint32_t>(i));
      if (g.is_gpu(v)) {
        jg.gpu.back() = 1;
        jg.dur_ns.back() = g.gpu_dur_ns[g.activity_of(v)];
      }
    }
    b.local_edge_base.push_back(static_cast<uint32_t>(jg.edges.size()));
    for (const Edge& e : g.edges) {
      jg.edges.push_back({e.from + first, e.to + first, e.w_ns, e.kind});
      jg.edge_kind.push_back(JobEdgeKind::kLocal);
    }
  }

  // The collective instances.
  std::vector<const analysis::CollectiveSequence*> seqs;
  for (const JobRankInput& r : ranks) seqs.push_back(r.collectives);
  const analysis::CollectiveMatching matching = analysis::match_collectives(seqs);
  jg.unmatched_calls = matching.unmatched_calls;
  if (matching.unmatched_calls > 0) {
    std::string per;
    for (size_t i = 0; i < ranks.size(); ++i)
      per += fmt::format("{}rank {}: {}", per.empty() ? "" : ", ", ranks[i].rank,
                         ranks[i].collectives->calls.size() - static_cast<size_t>(matching.unmatched_per_rank[i]));
    jg.notes.push_back(fmt::format(
        "{} collective calls are not on every rank (the k-th call of an operation is matched on every rank; "
        "matched calls per rank: {}): they keep their recorded times, with no cross-rank edge",
        matching.unmatched_calls, per));
  }
  // Store row -> timeline activity, per rank.
  std::vector<std::unordered_map<uint32_t, uint32_t>> activity_of_row(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i].collectives->source == CollectiveSource::kGpuKernels)
      for (uint32_t k = 0; k < ranks[i].timeline->activities.size(); ++k)
        activity_of_row[i].emplace(ranks[i].timeline->activities[k].row, k);

  int64_t lost = 0, rooted = 0;
  for (const analysis::MatchedCollective& m : matching.matched) {
    // A rooted or point-to-point operation does not hold every rank until
    // the last arrives (a broadcast's root may leave first): not tied.
    if (!analysis::is_synchronizing_op(m.op)) {
      ++rooted;
      continue;
    }
    JobCollective c{m.op, m.ordinal, INT64_MAX, 0, {}, {}};
    int64_t latest = INT64_MIN;
    bool found = true;
    for (size_t i = 0; i < ranks.size() && found; ++i) {
      const CollectiveCall& call = ranks[i].collectives->calls[m.call[i]];
      c.transfer_ns = std::min(c.transfer_ns, saturating_sub(call.end_ns, call.start_ns));
      latest = std::max(latest, saturating_sub(call.start_ns, clock_offset(clocks, ranks[i].rank)));
      if (ranks[i].collectives->source == CollectiveSource::kGpuKernels) found = activity_of_row[i].contains(call.row);
    }
    if (!found) {
      ++lost;
      continue;
    }
    c.join = b.add_node(saturating_add(latest, c.transfer_ns), kNoRank);
    for (size_t i = 0; i < ranks.size(); ++i) {
      const CollectiveCall& call = ranks[i].collectives->calls[m.call[i]];
      const JobGraph::Rank& r = jg.ranks[i];
      const int64_t s = saturating_sub(call.start_ns, ranks[i].base_time_ns);
      const int64_t e = saturating_sub(call.end_ns, ranks[i].base_time_ns);
      const uint32_t end = b.add_node(saturating_add(e, r.shift_ns), static_cast<uint32_t>(i));
      uint32_t arrival;
      if (ranks[i].collectives->source == CollectiveSource::kGpuKernels) {
        arrival = jg.node(i, r.graph->gpu_node(activity_of_row[i].at(call.row)));
        b.reroute[arrival] = end;
      } else {
        arrival = add_host_call(b, i, s, e, end);
      }
      if (jg.recorded_ns[end] < latest) ++jg.ends_before_arrival;
      b.add_edge(arrival, c.join, c.transfer_ns, JobEdgeKind::kArrival);
      b.add_edge(c.join, end, std::min<int64_t>(0, saturating_sub(jg.recorded_ns[end], jg.recorded_ns[c.join])),
                 JobEdgeKind::kRelease);
      jg.collective_edges += 2;
      c.arrival.push_back(arrival);
      c.end.push_back(end);
    }
    jg.collectives.push_back(std::move(c));
  }
  if (lost > 0)
    jg.notes.push_back(fmt::format("{} matched collectives have a kernel missing from a rank's GPU timeline: no "
                                   "cross-rank edge",
                                   lost));
  if (rooted > 0)
    jg.notes.push_back(fmt::format("{} matched calls of rooted or point-to-point operations (broadcast, reduce, "
                                   "send/recv) are not tied across ranks: their ranks need not wait for each other",
                                   rooted));
  if (jg.ends_before_arrival > 0)
    jg.notes.push_back(fmt::format(
        "{} collective ends are recorded before another rank arrived, on clocks aligned by the median collective end: "
        "the clocks disagree by more than the alignment corrects, or the recorded span ends before the collective "
        "completes (a host range of an asynchronous call); their release edges keep the recorded weight",
        jg.ends_before_arrival));
  if (jg.collectives.empty())
    jg.notes.push_back("no synchronizing collective is matched across ranks: the ranks are replayed side by side, untied");
  // Work that followed a collective kernel waits for the rank's end of it.
  for (size_t k = 0; k < jg.edges.size(); ++k)
    if (jg.edge_kind[k] == JobEdgeKind::kLocal && b.reroute[jg.edges[k].from] != kNoNode)
      jg.edges[k].from = b.reroute[jg.edges[k].from];

  sort_and_index(jg);
  residuals(jg);
  jg.order = topological_order(jg.node_count(), jg.edges);
  jg.cycle_nodes = static_cast<int64_t>(jg.node_count() - jg.order.size());
  if (jg.cycle_nodes > 0)
    jg.notes.push_back(fmt::format(
        "the cross-rank edges close a dependency cycle through {} nodes (the ranks issue the matched collectives in "
        "different orders, or a call is matched with the wrong instance): the job is not replayed (each rank's "
        "replay stands)",
        jg.cycle_nodes));
  return jg;
}

}  // namespace stepscope::whatif
