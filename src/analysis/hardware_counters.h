// Hardware counters per kernel, from a trace recorded with CUPTI's range
// profiler (torch.profiler's experimental profiler_metrics with
// profiler_measure_per_kernel): one "cuda_profiler_range" event per kernel,
// its counters in the args. Such a trace has no kernel events and its ranges
// carry no measured time, so this is the one analysis it supports. Each range
// is tied to the kernel launch that made it (by launch order) and through the
// launch to the PyTorch operators around it. Definitions: docs/metrics.md,
// "Hardware counters".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/event_store.h"

namespace stepscope::analysis {

// Values derived from the counters of one or more ranges. Each is nullopt
// when none of the counters it needs was recorded.
struct CounterDerived {
  std::optional<double> cuda_core_flops;   // FLOPs on CUDA cores: SASS add/mul x1, fma x2, all precisions
  std::optional<double> fp32_flops;        // the fp32 part (fadd, fmul, ffma)
  std::optional<double> fp16_flops;        // the fp16 part (hadd, hmul, hfma)
  std::optional<double> fp64_flops;        // the fp64 part (dadd, dmul, dfma)
  std::optional<double> tensor_core_insts; // sm__inst_executed_pipe_tensor.sum (warp instructions)
  std::optional<double> dram_bytes;        // dram__bytes_read.sum + dram__bytes_write.sum

  void add(const CounterDerived& o);
};

struct CounterRangeRow {
  std::string name;                // the range's name: the kernel's (demangled) name per kernel
  int64_t device = -1;             // pid of the range (Kineto writes the device there)
  std::string top_level_op;        // outermost CPU op around the matched launch ("" if none)
  std::string bottom_level_op;     // innermost one
  CounterDerived derived;
  std::vector<std::pair<std::string, double>> counters;  // every counter of the range, as recorded
};

struct CounterGroup {
  std::string name;     // kernel name or top-level op
  int64_t ranges = 0;
  CounterDerived derived;
};

struct CounterTotal {
  std::string name;     // the counter, e.g. dram__bytes_read.sum
  int64_t ranges = 0;   // ranges that recorded it
  double total = 0;     // sum over those ranges
};

struct HardwareCountersResult {
  int64_t ranges = 0;          // cuda_profiler_range events
  int64_t devices = 0;         // distinct devices among them
  int64_t kernel_launches = 0; // kernel-launch calls on the host (cudaLaunchKernel*, cuLaunchKernel*, ...)
  bool matched_to_launches = false;  // ranges tied to launches (and operators) by order
  std::string match_note;      // why they were not, when not
  CounterDerived total;
  std::vector<CounterTotal> counters;  // every counter name seen, by name
  std::vector<CounterGroup> kernels;   // by range name, most CUDA-core FLOPs first
  std::vector<CounterGroup> ops;       // by top-level op (empty unless matched)
  std::vector<CounterRangeRow> rows;   // every range, in trace order
};

// Empty (ranges == 0) for a trace without counter ranges.
HardwareCountersResult analyze_hardware_counters(const trace::EventStore& store);

// True for a host call that launches one kernel (what a per-kernel range
// measures): cudaLaunchKernel, cudaLaunchKernelExC, cudaLaunchCooperativeKernel,
// cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel, hipLaunchKernel,
// hipExtLaunchKernel, hipModuleLaunchKernel.
bool is_kernel_launch_call(std::string_view name);

}  // namespace stepscope::analysis
