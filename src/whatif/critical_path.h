// The critical path of each step of one rank's replay: walking back from the
// node that ends a step's window through the in-edge that set each node's
// time (ReplayResult::binding) until the window's start, the chain of CPU
// time, launches, GPU work and waits that bounds the step. Its segments tile
// the window: their lengths sum to the window's wall time exactly.
// Definitions: docs/whatif.md ("Critical path").
//
// The segment types name nodes and edges of one StepGraph; a path that
// crosses ranks is a sequence of (rank, PathSegment) runs of these types.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/gpu_timeline.h"
#include "whatif/replay.h"
#include "whatif/step_graph.h"

namespace stepscope::whatif {

// What a stretch of the path spent its time on.
enum class PathCategory : uint8_t {
  kHostRuntime,        // CPU time inside a runtime/driver call (launches, the host side of copies, syncs' own cost)
  kHostOther,          // CPU time between runtime calls (framework ops, Python)
  kDataLoader,         // CPU time inside a DataLoader __next__
  kLaunch,             // launch latency; the anchor distance of GPU work without a launch record
  kGpuCompute,         // a kernel of class computation
  kGpuMemory,          // a memcpy / memset (class memory)
  kGpuCommunication,   // a collective / point-to-point kernel
  kStreamWait,         // a stream's gap, a wait on another stream, device-side sync work (class other)
  kSync,               // a blocking call's return after the GPU work it waited for (host_wait)
  kResidual,           // time no edge explains (a node's residual delay, or before a node without in-edges)
};
constexpr int kPathCategoryCount = 10;
std::string_view to_string(PathCategory c);
// Host CPU time on the path (kHostRuntime, kHostOther, kDataLoader).
constexpr bool is_host_cpu(PathCategory c) {
  return c == PathCategory::kHostRuntime || c == PathCategory::kHostOther || c == PathCategory::kDataLoader;
}

enum class SegmentKind : uint8_t {
  kEdge,      // an edge's weight: from its source's out time (a mark, or GPU work's end) to the bound it set
  kGpuWork,   // a GPU activity's duration
  kResidual,  // a node's residual delay, or the time before a node without in-edges
};

struct PathSegment {
  int64_t start_ns = 0;  // replayed time, on the rank's clock
  int64_t end_ns = 0;
  SegmentKind kind = SegmentKind::kEdge;
  PathCategory category = PathCategory::kResidual;
  uint32_t node = kNoNode;  // kGpuWork: its GPU node; kResidual: the delayed node; kEdge: the edge's target
  uint32_t edge = kNoEdge;  // kEdge: index into StepGraph::edges
  int64_t dur_ns() const { return end_ns - start_ns; }
};

struct StepPath {
  int64_t step = -1;
  int64_t start_ns = 0;  // the step's window in the replay
  int64_t end_ns = 0;
  std::vector<PathSegment> segments;  // time order; they tile [start_ns, end_ns)
  std::array<int64_t, kPathCategoryCount> by_category_ns{};
  int64_t wall_ns() const { return end_ns - start_ns; }
};

// The category of each host_order edge's stretch, per target mark i (the
// CPU time between marks i-1 and i): inside a DataLoader span, else inside
// a runtime call, else other CPU work. Index 0 is unused.
std::vector<PathCategory> host_categories(const StepGraph& g);

// The category of GPU work of class `c` on the path.
PathCategory gpu_category(analysis::KernelClass c);
// The category of an edge's stretch of the path; a host_order edge's is
// `host_stretch`, its target's entry of host_categories().
PathCategory edge_category(EdgeKind kind, PathCategory host_stretch);

// The critical path of every window of `r`, a replay of `g` with input `in`
// (for the run as recorded: recorded_input(g)). `timeline` is the one the
// graph was built from (the class of each activity). The window rule is the
// replay's (replay.h): a window ends at its step's end mark or the next
// step's start mark, whichever is earlier, and the last step's at the end of
// the latest GPU work it launched when that is later. Requires g.usable().
std::vector<StepPath> critical_paths(const StepGraph& g, const ReplayInput& in, const ReplayResult& r,
                                     const analysis::GpuTimeline& timeline);

}  // namespace stepscope::whatif
