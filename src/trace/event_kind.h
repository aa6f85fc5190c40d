// What an event is, decided once at import from its Chrome-trace category (and
// for a few cases its name) so analyses never compare category strings.
#pragma once

#include <cstdint>
#include <string_view>

namespace stepscope::trace {

enum class EventKind : uint8_t {
  kCpuOp,              // "cpu_op" (2022+), "Operator" (2021)
  kUserAnnotation,     // "user_annotation": record_function ranges; ProfilerStep#N in any host category
  kGpuUserAnnotation,  // "gpu_user_annotation": the same ranges drawn on a GPU stream
  kPythonFunction,     // "python_function" (with_stack)
  kRuntime,            // "cuda_runtime", "cuda_driver", "Runtime" (2021), hip/mtia runtimes
  kKernel,             // "kernel", "Kernel" (2021), MTIA/AMD device kernels
  kMemcpy,             // "gpu_memcpy", "Memcpy" (2021)
  kMemset,             // "gpu_memset", "Memset" (2021)
  kGpuSync,            // "cuda_sync": a stream or event wait drawn on a GPU stream
  kMemory,             // "[memory]" instants: allocator samples (profile_memory)
  kInstant,            // other instants ("cpu_instant_event" that is not [memory], ...)
  kTraceSpan,          // Kineto's own "Trace" / "overhead" spans
  // "cuda_profiler_range": one measurement of CUPTI's range profiler
  // (torch.profiler profiler_metrics), hardware counters in its args. Its
  // times are not measured: Kineto spreads the ranges evenly over the session.
  kCounterRange,
  kOther,              // any other complete event; kept, never interpreted
};

// True for work that runs on a device queue (a stream).
constexpr bool is_gpu_kind(EventKind k) {
  return k == EventKind::kKernel || k == EventKind::kMemcpy || k == EventKind::kMemset ||
         k == EventKind::kGpuUserAnnotation || k == EventKind::kGpuSync;
}

// True for GPU work that occupies the device (annotations do not).
constexpr bool is_gpu_work(EventKind k) {
  return k == EventKind::kKernel || k == EventKind::kMemcpy || k == EventKind::kMemset;
}

// Classifies a category string (case-insensitive, as both generations differ in
// case). `name` decides between [memory] samples and other instants, and
// makes a host "ProfilerStep#N" a step annotation (step_kind).
EventKind classify_category(std::string_view cat, std::string_view name, char phase);

// The kind of a complete event named `name` whose category gave `category_kind`:
// kUserAnnotation for a host "ProfilerStep#..." range in any host category,
// else `category_kind`. torch.profiler opens one record_function range
// "ProfilerStep#N" per prof.step() (torch/profiler/profiler.py); PyTorch
// 1.8-1.9 wrote every record_function range with category "Operator" (as its
// ops), later releases "user_annotation". Either way it is the step, not an
// op. The device's copy ("gpu_user_annotation") stays a GPU annotation.
constexpr EventKind step_kind(EventKind category_kind, std::string_view name) {
  const bool host_range = category_kind == EventKind::kCpuOp || category_kind == EventKind::kUserAnnotation ||
                          category_kind == EventKind::kOther;
  return host_range && name.starts_with("ProfilerStep#") ? EventKind::kUserAnnotation : category_kind;
}

std::string_view to_string(EventKind k);

}  // namespace stepscope::trace
