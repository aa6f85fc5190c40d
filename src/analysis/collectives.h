// The communication kernels of one rank as a sequence of collective calls,
// keyed so the same call can be found on every rank: (operation, ordinal),
// where ordinal counts earlier calls of that operation on this rank.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/gpu_timeline.h"

namespace stepscope::analysis {

struct CollectiveCall {
  uint32_t op = 0;         // index into CollectiveSequence::ops
  uint32_t ordinal = 0;    // k: this is the k-th call (from 0) of `op` on this rank
  int32_t stream = -1;     // stream id of the kernel
  int64_t start_ns = 0;    // kernel start on the absolute clock (base_time_ns + ts), ns
  int64_t end_ns = 0;      // kernel end on the absolute clock, ns
  uint32_t row = 0;        // store row of the kernel (or of the host range, CollectiveSource::kHostOps)
};

// Where a rank's calls were read from. GPU kernels are the rule; a rank whose
// trace has no communication kernel (gloo on CPU, or a profile without
// CUDA activity) falls back to the host-side c10d ranges ("gloo:all_reduce",
// "nccl:all_reduce"), whose start is when that rank reached the collective.
enum class CollectiveSource : uint8_t { kNone, kGpuKernels, kHostOps };

struct CollectiveSequence {
  std::vector<std::string> ops;       // operation keys, lower case without '_': "allreduce", "allgather", "sendrecv"
  std::vector<CollectiveCall> calls;  // in start order
  CollectiveSource source = CollectiveSource::kNone;
};

// Operation of a communication kernel from its name, for both NCCL naming
// generations ("ncclKernel_AllReduce_RING_LL_Sum_float",
// "ncclDevKernel_AllGather_RING_LL"), RCCL and others; the whole name when no
// rule applies. Not normalised (see normalize_op).
std::string collective_op_of(std::string_view kernel_name);

// Lower case without '_' or ' ': "AllReduce", "all_reduce" -> "allreduce".
std::string normalize_op(std::string_view op);

// The op of a host-side c10d range, "<backend>:<op>" as ProcessGroup
// implementations name them (gloo, nccl, mpi, ucc, xccl, hccl): "all_reduce"
// from "gloo:all_reduce"; empty for any other name.
std::string_view host_collective_op(std::string_view name);

// The op of a call is the kernel's "Collective name" arg when present, else
// collective_op_of(kernel name); both normalised. Without any communication
// kernel, the calls are the host ranges host_collective_op names (CPU ops and
// user annotations), in start order.
CollectiveSequence extract_collectives(const trace::EventStore& store, const GpuTimeline& timeline);

}  // namespace stepscope::analysis
