// One simulated profiler record, before it is turned into text. The step
// model fills these; the Kineto writer formats them. Keeping the two apart
// lets a pass that writes only host events skip formatting device ones.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stepscope::synth {

// Which record this is; decides the "ph", "cat" and the argument set written.
enum class EventType : uint8_t {
  kCpuOp,              // "X" cpu_op: an ATen operator
  kUserAnnotation,     // "X" user_annotation: ProfilerStep#N, record_function ranges
  kGpuUserAnnotation,  // "X" gpu_user_annotation: the same range drawn on a stream
  kRuntime,            // "X" cuda_runtime: cudaLaunchKernel, cudaMemcpyAsync, ...
  kDriver,             // "X" cuda_driver: cuLaunchKernelEx (cuBLAS on Hopper)
  kKernel,             // "X" kernel
  kMemcpy,             // "X" gpu_memcpy
  kMemset,             // "X" gpu_memset
  kMemory,             // "i" cpu_instant_event "[memory]": allocator sample
  kFlowStart,          // "s" ac2g / fwdbwd
  kFlowEnd,            // "f" ac2g / fwdbwd
};

// Shapes of an operator's inputs, already formatted as Kineto writes them
// (JSON arrays), shared by every call of that operator.
struct OpShape {
  std::string input_dims;     // [[8, 1024], [1024, 1024]]
  std::string input_types;    // ["c10::BFloat16", ...]
  std::string input_strides;  // [[1024, 1], [1, 1024]]
  std::string concrete;       // ["", ""]
};

// Launch configuration of a kernel, as CUPTI reports it.
struct KernelShape {
  int grid[3] = {1, 1, 1};
  int block[3] = {128, 1, 1};
  int registers = 32;
  int shared_memory = 0;
  double blocks_per_sm = 1.0;
  double warps_per_sm = 4.0;
  int occupancy_pct = 50;
};

// A collective's description, attached to record_param_comms and NCCL kernels.
struct CollectiveInfo {
  std::string_view name = "allreduce";  // "Collective name"
  int64_t nelems = 0;                   // In/Out msg nelems
  int group_size = 1;
  std::string_view dtype = "BFloat16";
  const std::string* ranks = nullptr;   // "[0, 1, ...]"
};

struct TraceEvent {
  EventType type = EventType::kCpuOp;
  std::string_view name;
  std::string_view flow_category;  // "ac2g" or "fwdbwd" for flows
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  int64_t external_id = -1;  // "External id" (-1: not written)
  int64_t correlation = -1;  // runtime and GPU rows; flow id for flows
  int64_t ev_idx = -1;       // "Ev Idx" of host records
  int64_t sequence = -1;     // "Sequence number" of autograd-visible ops
  int64_t fwd_tid = -1;      // "Fwd thread id" of backward ops
  int cbid = 0;              // runtime callback id
  int stream = 0;
  int device = 0;
  int64_t bytes = 0;         // memcpy/memset size, or [memory] delta
  int64_t total_allocated = 0;
  int64_t total_reserved = 0;
  int64_t addr = 0;
  const OpShape* shape = nullptr;
  const KernelShape* kernel = nullptr;
  const CollectiveInfo* collective = nullptr;
  bool host = true;          // host side (written in the first pass) or device side
};

}  // namespace stepscope::synth
