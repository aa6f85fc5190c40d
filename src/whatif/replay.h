// Replays a step graph with given durations and edge weights: every node
// happens at the latest of its in-edges' bounds plus its residual delay, in
// the graph's topological order. With the recorded durations it reproduces
// the recorded times; a remedy is a change of the input (shorter GPU work,
// less CPU time between host marks, a wait removed), and the step windows of
// the replay are what the run would take with it.
#pragma once

#include <cstdint>
#include <vector>

#include "whatif/step_graph.h"

namespace stepscope::whatif {

constexpr uint32_t kNoEdge = UINT32_MAX;
// An edge weight that removes the edge from the replay.
constexpr int64_t kDropped = INT64_MIN;

// What a replay may change; recorded_input() gives the run as profiled.
struct ReplayInput {
  std::vector<int64_t> gpu_dur_ns;   // per activity, ns
  std::vector<int64_t> edge_w_ns;    // per edge (StepGraph::edges order), ns; kDropped removes it
  std::vector<int64_t> residual_ns;  // per node, ns
};
ReplayInput recorded_input(const StepGraph& g);

// One step's window, by the rule of the step-time attribution
// (docs/metrics.md): from its host start to the next step's host start (its
// own host end when earlier); the last step runs on to the end of the GPU
// work it launched.
struct StepWindow {
  int64_t step = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t wall_ns() const { return end_ns - start_ns; }
};

struct ReplayResult {
  std::vector<int64_t> time_ns;    // per node: a mark's time or an activity's start, ns
  std::vector<uint32_t> binding;   // per node: the in-edge that set its time, or kNoEdge (a root)
  std::vector<StepWindow> windows; // the steps with a non-empty window, in order
  int64_t total_ns = 0;            // sum of the windows' walls
};

// Requires g.usable(). Nodes without in-edges keep their recorded time.
ReplayResult replay(const StepGraph& g, const ReplayInput& in);

// The windows of the recorded run, by the same rule.
std::vector<StepWindow> recorded_windows(const StepGraph& g);

// The windows by that rule given each node's time and each activity's
// duration (the job replay's windows of one rank, whatif/job_replay.h).
std::vector<StepWindow> step_windows(const StepGraph& g, const std::vector<int64_t>& time_ns,
                                     const std::vector<int64_t>& gpu_dur_ns);

// A window and the node whose time (a mark) or end (GPU work) closes it:
// where a critical path starts walking back.
struct EndedWindow {
  StepWindow window;
  uint32_t end_node = kNoNode;
};
std::vector<EndedWindow> step_windows_with_ends(const StepGraph& g, const std::vector<int64_t>& time_ns,
                                                const std::vector<int64_t>& gpu_dur_ns);

}  // namespace stepscope::whatif
