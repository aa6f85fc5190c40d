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
  std::vector<uint32_t> drop;            // job indexes of local edges a host collective replaces

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

// Host collectives (gloo on CPU) are points on their rank's host timeline:
// each call's start and end go into the order of the host marks, and the
// time between consecutive points is kept as host-call edges, except from a
// call's start to its own end (that is start -> join -> end). The host-order
// edges those points fall between go.
struct HostPoint {
  int64_t t_ns;   // graph clock
  uint32_t node;  // job node
  uint32_t seq;   // a call's start before its end at equal times
};

void thread_host_calls(Builder& b, size_t i, std::vector<HostPoint> calls) {
  JobGraph& jg = b.jg;
  const StepGraph& g = *jg.ranks[i].graph;
  // (t, tie class, seq, node): at one time, marks that end, then the calls'
  // points, then marks that start (as the graph orders ends before starts).
  struct Point {
    int64_t t;
    int cls;
    uint32_t seq;
    uint32_t node;
    bool mark;
  };
  std::vector<Point> pts;
  pts.reserve(g.mark_count() + calls.size());
  for (uint32_t m = 0; m < g.mark_count(); ++m) {
    const MarkKind k = g.marks[m].kind;
    const bool end = k == MarkKind::kCallEnd || k == MarkKind::kStepEnd || k == MarkKind::kLoaderEnd;
    pts.push_back({g.marks[m].t_ns, end ? 0 : 2, m, jg.node(i, m), true});
  }
  for (const HostPoint& c : calls) pts.push_back({c.t_ns, 1, c.seq, c.node, false});
  std::stable_sort(pts.begin(), pts.end(), [](const Point& x, const Point& y) {
    if (x.t != y.t) return x.t < y.t;
    if (x.cls != y.cls) return x.cls < y.cls;
    return x.seq < y.seq;
  });
  for (size_t k = 1; k < pts.size(); ++k) {
    const Point& p = pts[k - 1];
    const Point& q = pts[k];
    if (p.mark && q.mark) continue;  // the graph's own host-order edge
    // A call's start and its own end are adjacent seq numbers (2c, 2c + 1).
    if (!p.mark && !q.mark && q.seq == p.seq + 1 && p.seq % 2 == 0) continue;
    b.add_edge(p.node, q.node, q.t - p.t, JobEdgeKind::kHostCall);
  }
  // Host-order edges between two marks that now have a call's point between them.
  for (size_t k = 1; k < pts.size(); ++k) {
    if (!pts[k].mark || pts[k - 1].mark) continue;
    size_t before = k - 1;
    while (before > 0 && !pts[before].mark) --before;
    if (!pts[before].mark) continue;
    const uint32_t to = pts[k].seq, from = pts[before].seq;
    for (uint32_t e = g.in_begin[to]; e < g.in_begin[to + 1]; ++e)
      if (g.edges[e].kind == EdgeKind::kHostOrder && g.edges[e].from == from) b.drop.push_back(b.local_edge_base[i] + e);
  }
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

  Builder b{jg, {}, {}, {}};
  // Each rank's graph, on the job clock.
  for (size_t i = 0; i < ranks.size(); ++i) {
    const StepGraph& g = *ranks[i].graph;
    const auto first = static_cast<uint32_t>(jg.node_count());
    const int64_t shift = saturating_sub(ranks[i].base_time_ns, clock_offset(clocks, ranks[i].rank));
    jg.ranks.push_back({ranks[i].rank, &g, ranks[i].timeline, first, shift});
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
  // Store row -> timeline activity of the communication kernels, per rank.
  std::vector<std::unordered_map<uint32_t, uint32_t>> activity_of_row(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i].collectives->source == CollectiveSource::kGpuKernels)
      for (uint32_t k = 0; k < ranks[i].timeline->activities.size(); ++k)
        if (ranks[i].timeline->activities[k].cls == analysis::KernelClass::kCommunication)
          activity_of_row[i].emplace(ranks[i].timeline->activities[k].row, k);

  std::vector<std::vector<HostPoint>> host_calls(ranks.size());
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
        arrival = b.add_node(saturating_add(s, r.shift_ns), static_cast<uint32_t>(i));
        const auto seq = static_cast<uint32_t>(host_calls[i].size());  // even: a start
        host_calls[i].push_back({s, arrival, seq});
        host_calls[i].push_back({e, end, seq + 1});
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
  for (size_t i = 0; i < ranks.size(); ++i)
    if (!host_calls[i].empty()) thread_host_calls(b, i, std::move(host_calls[i]));
  // Work that followed a collective kernel waits for the rank's end of it.
  for (size_t k = 0; k < jg.edges.size(); ++k)
    if (jg.edge_kind[k] == JobEdgeKind::kLocal && b.reroute[jg.edges[k].from] != kNoNode)
      jg.edges[k].from = b.reroute[jg.edges[k].from];

  if (!b.drop.empty()) {
    std::vector<uint8_t> gone(jg.edges.size(), 0);
    for (uint32_t k : b.drop) gone[k] = 1;
    size_t out = 0;
    for (size_t k = 0; k < jg.edges.size(); ++k) {
      if (gone[k]) continue;
      jg.edges[out] = jg.edges[k];
      jg.edge_kind[out++] = jg.edge_kind[k];
    }
    jg.edges.resize(out);
    jg.edge_kind.resize(out);
  }
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
