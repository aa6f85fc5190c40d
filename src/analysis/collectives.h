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
};

struct CollectiveSequence {
  std::vector<std::string> ops;       // operation keys, lower case without '_': "allreduce", "allgather", "sendrecv"
  std::vector<CollectiveCall> calls;  // in start order
};

// Operation of a communication kernel from its name, for both NCCL naming
// generations ("ncclKernel_AllReduce_RING_LL_Sum_float",
// "ncclDevKernel_AllGather_RING_LL"), RCCL and others; the whole name when no
// rule applies. Not normalised (see normalize_op).
std::string collective_op_of(std::string_view kernel_name);

// Lower case without '_' or ' ': "AllReduce", "all_reduce" -> "allreduce".
std::string normalize_op(std::string_view op);

// The op of a call is the kernel's "Collective name" arg when present, else
// collective_op_of(kernel name); both normalised.
CollectiveSequence extract_collectives(const trace::EventStore& store, const GpuTimeline& timeline);

}  // namespace stepscope::analysis
