// The dependency graph of one rank's profiled run, for replaying it with
// other durations ("what would the step take if X changed"). Two kinds of
// node: points on the host's timeline (runtime-call starts and ends, step
// starts and ends, DataLoader spans), and units of GPU work (each timeline
// activity; its end is start + duration). Each edge says "v cannot happen
// before u plus w". Weights are set from the recorded run so that replaying
// the recorded durations reproduces every recorded time exactly; what no edge
// explains is kept as a node's residual delay. Edge types and what they cannot
// see: docs/whatif.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/gpu_timeline.h"
#include "analysis/steps.h"
#include "trace/event_store.h"

namespace stepscope::whatif {

constexpr uint32_t kNoNode = UINT32_MAX;

enum class EdgeKind : uint8_t {
  kHostOrder,    // host mark -> next host mark: the CPU work between them (w = that time)
  kLaunch,       // launch call start -> its GPU work (w = launch latency)
  kAnchor,       // latest host mark -> GPU work with no launch record (w = recorded distance)
  kStream,       // GPU work -> the next work on its stream (w = the GPU's gap between them)
  kCrossStream,  // GPU work -> work on another stream that waited for it (inferred: an event wait)
  kHostWait,     // GPU work -> the end of a blocking call that waited for it (w = release time)
};
constexpr int kEdgeKindCount = 6;
std::string_view to_string(EdgeKind k);

enum class MarkKind : uint8_t {
  kCallStart,      // a runtime/driver call starts
  kCallEnd,        // it returns
  kStepStart,      // ProfilerStep#N starts on the host
  kStepEnd,        // it ends
  kLoaderStart,    // a DataLoader __next__ starts
  kLoaderEnd,      // it returns
};

// A point on the host timeline. All host threads share one timeline: the
// threads of a PyTorch training process take turns (the main thread waits
// in backward() while the autograd thread runs), so the CPU time between two
// points is kept whichever thread spent it.
struct HostMark {
  int64_t t_ns = 0;  // recorded time, ns
  uint32_t row = 0;  // store row of the call / step / DataLoader span
  MarkKind kind = MarkKind::kCallStart;
  bool blocking = false;  // kCallEnd of a call that waited for GPU work (has kHostWait in-edges)
};

struct Edge {
  uint32_t from = 0;  // node id
  uint32_t to = 0;    // node id
  int64_t w_ns = 0;   // the least time from `from` (a mark's time, GPU work's end; a launch's start) to `to`
  EdgeKind kind = EdgeKind::kHostOrder;
};

// Node ids: [0, marks.size()) are host marks in time order; marks.size() + k
// is timeline activity k (its start; its end is start + duration).
struct StepGraph {
  std::vector<HostMark> marks;
  std::vector<int64_t> gpu_dur_ns;   // recorded duration of activity k, ns
  std::vector<int64_t> recorded_ns;  // recorded time of each node (mark time, activity start), ns
  std::vector<int64_t> residual_ns;  // per node: recorded time minus the latest in-edge bound, ns (>= 0)
  std::vector<Edge> edges;           // sorted by `to`
  std::vector<uint32_t> in_begin;    // edges into node v: [in_begin[v], in_begin[v + 1])
  std::vector<uint32_t> order;       // every node, each after all its predecessors

  struct Step {
    int64_t step = -1;                  // N of ProfilerStep#N
    uint32_t start_mark = kNoNode;      // kStepStart mark
    uint32_t end_mark = kNoNode;        // kStepEnd mark
    std::vector<uint32_t> activities;   // timeline activities the step launched (analysis::step_of_activities)
  };
  std::vector<Step> steps;

  // The typical weights, from the recorded run: what an edge that did not
  // bind there is given (an edge that bound keeps its recorded weight when
  // smaller): launch latency where the stream was idle at launch, the GPU's
  // gap between queued work on one stream, a blocking call's return after
  // the work it waited for ended. Medians, ns.
  int64_t launch_latency_ns = 0;
  int64_t stream_gap_ns = 0;
  int64_t sync_release_ns = 0;

  // What the graph could not model (each also a note).
  int64_t launch_after_start = 0;   // GPU work that started before its launch call: the launch edge is dropped
  int64_t cycle_nodes = 0;          // nodes left out of `order` by a dependency cycle (0 in a usable graph)
  std::vector<std::string> notes;

  size_t mark_count() const { return marks.size(); }
  size_t node_count() const { return recorded_ns.size(); }
  uint32_t gpu_node(size_t activity) const { return static_cast<uint32_t>(marks.size() + activity); }
  bool is_gpu(uint32_t node) const { return node >= marks.size(); }
  size_t activity_of(uint32_t node) const { return node - marks.size(); }
  bool usable() const { return cycle_nodes == 0 && !order.empty(); }
};

// Host spans the graph needs beyond the runtime calls, found by the
// diagnosis' name rules (diagnose/host_index.h).
struct HostSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t row = 0;  // store row
};
struct HostSpans {
  // Calls that block the host until GPU work ends: syncs, copies into
  // pageable memory, synchronising frees.
  std::vector<HostSpan> blocking;
  std::vector<HostSpan> dataloader;  // DataLoader __next__ spans
};

// Gaps longer than this between the end of work on one stream and the start
// of waiting work on another are not taken as an event wait (ns).
constexpr int64_t kCrossStreamWindowNs = 10'000;

// Kahn's order of nodes [0, n) over `edges`: every node after all its
// predecessors; nodes on a cycle are left out.
std::vector<uint32_t> topological_order(size_t n, const std::vector<Edge>& edges);

StepGraph build_step_graph(const trace::EventStore& store, const analysis::GpuTimeline& timeline,
                           const analysis::StepsResult& steps, const HostSpans& host);

}  // namespace stepscope::whatif
