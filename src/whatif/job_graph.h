// The ranks of one job as one dependency graph: every rank's step graph
// (step_graph.h), node ids offset per rank, tied together where the ranks
// meet in a collective. NCCL (and gloo) complete a collective only once every
// rank of the communicator has joined it, so the same collective instance on
// every rank (analysis/collective_matching.h) ends when the last rank has
// arrived plus the time the transfer takes from there:
//
//   end on rank r = max over participants p of (arrival of p + T) + residual
//
// T, the transfer time, is estimated as the shortest recorded duration over
// the participants: the rank that arrived last waited for nobody, so its
// duration is the transfer alone. An instance is one join node (the latest
// arrival plus T: in-edges from every rank's arrival) and, per rank, an end
// node released by the join; the work that followed the collective on that
// rank (the next work on its stream, a sync that waited for it, the host's
// next mark after a host collective) leaves from that end. Edges grow with
// ranks, not with their square. Times are on one clock: each rank's are
// moved by its clock offset from analysis::align_clocks (the median
// difference of matched synchronising collectives' end times: those end
// together in real time). What the graph cannot see: docs/whatif.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/clock_alignment.h"
#include "analysis/collectives.h"
#include "analysis/gpu_timeline.h"
#include "whatif/step_graph.h"

namespace stepscope::whatif {

constexpr uint32_t kNoRank = UINT32_MAX;

// One rank's part of the job: its graph and what it was built from.
struct JobRankInput {
  int64_t rank = 0;
  const StepGraph* graph = nullptr;
  const analysis::GpuTimeline* timeline = nullptr;            // the timeline `graph` was built from
  const analysis::CollectiveSequence* collectives = nullptr;  // analysis::extract_collectives of the same store
  int64_t base_time_ns = 0;  // store.meta.base_time_ns: the graph's times + base = the rank's absolute clock
  int64_t world_size = 0;    // store.meta.world_size (distributedInfo), 0 when unknown
};

enum class JobEdgeKind : uint8_t {
  kLocal,     // an edge of a rank's step graph (Edge::kind says which)
  kArrival,   // a rank's arrival at a collective -> the instance's join (w = T)
  kRelease,   // the join -> one rank's end of the collective (w = min(0, recorded slack))
  kHostCall,  // host collectives: between consecutive points of the host timeline, a call's start or end among them
};
std::string_view to_string(JobEdgeKind k);

// One matched collective instance.
struct JobCollective {
  std::string op;           // normalised operation ("allreduce")
  uint32_t ordinal = 0;     // the k-th call of `op` on every rank
  int64_t transfer_ns = 0;  // T: the shortest recorded duration over the participants, ns
  uint32_t join = 0;              // node: the latest arrival plus T
  std::vector<uint32_t> arrival;  // per rank (JobGraph::ranks order): node whose time is the rank's arrival
  std::vector<uint32_t> end;      // per rank: node of the rank's end of the collective
};

struct JobGraph {
  struct Rank {
    int64_t rank = 0;
    const StepGraph* graph = nullptr;
    const analysis::GpuTimeline* timeline = nullptr;  // the timeline `graph` was built from
    uint32_t first_node = 0;  // the graph's node v is job node first_node + v
    int64_t shift_ns = 0;     // job time = the graph's time + shift_ns (base time minus clock offset)
  };
  std::vector<Rank> ranks;
  // Nodes: each rank's graph nodes, in rank order, then per collective
  // instance its join and per rank its end (and a host collective's start).
  std::vector<int64_t> recorded_ns;  // per node, on the job clock, ns
  std::vector<int64_t> dur_ns;       // per node: a GPU node's recorded duration, 0 otherwise
  std::vector<uint32_t> rank_of;     // per node: index into ranks (kNoRank for a join)
  std::vector<uint8_t> gpu;          // per node: 1 for GPU work (its successors wait for its end)
  std::vector<int64_t> residual_ns;  // per node: recorded time minus the latest in-edge bound (>= 0), ns
  std::vector<Edge> edges;           // sorted by `to`; `from`/`to` are job node ids
  std::vector<JobEdgeKind> edge_kind;  // per edge
  std::vector<uint32_t> in_begin;    // edges into node v: [in_begin[v], in_begin[v + 1])
  std::vector<uint32_t> order;       // topological order (all nodes when usable)
  std::vector<JobCollective> collectives;

  int64_t collective_edges = 0;  // kArrival and kRelease edges
  int64_t unmatched_calls = 0;   // collective calls not on every rank: no edge
  // A rank's end of a collective recorded before the instance's latest
  // arrival on the aligned clocks (clock error beyond the alignment): its
  // release edge keeps the recorded (negative) weight. Counted per rank end.
  int64_t ends_before_arrival = 0;
  int64_t cycle_nodes = 0;       // nodes on a cycle the cross-rank edges closed (no replay)
  std::vector<std::string> notes;

  size_t node_count() const { return recorded_ns.size(); }
  uint32_t node(size_t rank_index, uint32_t local) const { return ranks[rank_index].first_node + local; }
  bool usable() const { return ranks.size() >= 2 && cycle_nodes == 0 && order.size() == node_count(); }
};

// Builds the job graph. A rank whose graph has no replay, or clocks that
// cannot be compared (status "refused"), leave no job graph (usable() false,
// a note); calls not on every rank are left without edges (a note); fewer
// ranks than the traces' world size get a note (the missing ranks' arrivals
// are not seen).
JobGraph build_job_graph(const std::vector<JobRankInput>& ranks, const analysis::ClockAlignment& clocks);

}  // namespace stepscope::whatif
