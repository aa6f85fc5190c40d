// A remedy as a change of the step graph: what the replay removes or shrinks
// when a finding's fix is applied. Each detector says what its fix touches
// (in store rows and host intervals, the trace's own terms); apply_remedy
// turns that into a ReplayInput. The transformations and their factors are
// documented in docs/whatif.md, "Remedies".
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "analysis/gpu_timeline.h"
#include "whatif/replay.h"
#include "whatif/step_graph.h"

namespace stepscope::whatif {

struct Remedy {
  // Blocking calls (store rows) that no longer wait for the GPU: the wait
  // edges into their return are removed (a sync dropped, a copy made async).
  std::vector<uint32_t> unblock_rows;
  // Host time removed: the CPU time between host marks that lies inside
  // these [start, end) intervals (trace clock, ns) is taken off.
  std::vector<std::pair<int64_t, int64_t>> host_removed;
  // All CPU time between host marks inside the steps scaled by this factor
  // (CUDA graphs / torch.compile: the host launches a graph, not each op).
  double host_time_factor = 1.0;
  // ... except inside these [start, end) intervals (host time another
  // finding's remedy accounts for), which keep their time.
  std::vector<std::pair<int64_t, int64_t>> host_scale_excluded;
  // GPU work (store rows) with a new duration factor (a faster precision, a
  // kernel no longer run: 0).
  std::vector<std::pair<uint32_t, double>> gpu_scale;
  // GPU work other than communication that starts in [start, end) (trace
  // clock, ns) with a new duration factor: a remedy stated by time window,
  // for a finding made from per-rank summaries (a slow rank's step brought
  // to the mean).
  struct WindowScale {
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    double factor = 1.0;
  };
  std::vector<WindowScale> gpu_scale_windows;
  // Chains of GPU work (store rows, in stream order, one stream) run as one
  // kernel: their summed time less the fixed cost of every kernel but the
  // first (fixed_kernel_cost_ns), at least the longest member's; the gaps
  // between them and the launches of all but the first go away. The memory
  // traffic fusion saves is not credited (the trace does not say which
  // kernel reads which one's output).
  std::vector<std::vector<uint32_t>> fused_chains;

  bool empty() const {
    return unblock_rows.empty() && host_removed.empty() && host_time_factor == 1.0 && gpu_scale.empty() &&
           gpu_scale_windows.empty() && fused_chains.empty();
  }
  // Adds another remedy's changes (all findings' remedies applied together).
  void merge(const Remedy& other);
};

// The fixed cost of one kernel on this timeline: the time a kernel takes
// whatever its work (launch on the device, ramp-up, drain), read as the
// 1st percentile of the kernels' durations; 0 with fewer than
// kMinKernelsForFixedCost kernels. About 0.8 µs on the H200 traces.
constexpr size_t kMinKernelsForFixedCost = 100;
int64_t fixed_kernel_cost_ns(const analysis::GpuTimeline& tl);

// `base` with the remedy applied. The timeline is the one the graph was
// built from (GPU node k is timeline activity k).
ReplayInput apply_remedy(const StepGraph& g, const analysis::GpuTimeline& timeline, const Remedy& r,
                         const ReplayInput& base);

}  // namespace stepscope::whatif
