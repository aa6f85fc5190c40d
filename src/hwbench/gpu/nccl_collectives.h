// NCCL collectives over every visible GPU from one process (one
// communicator per GPU, ncclCommInitAll): all-reduce, all-gather,
// reduce-scatter, all-to-all (grouped send/recv) and broadcast, float sums,
// message sizes doubling from 8 B to 4 GiB (quick: ×8 steps to 256 MiB).
// Times are host wall time over back-to-back calls, as nccl-tests takes
// them; medians over repeats. One GPU works: NCCL then copies locally and
// busbw is 0 by definition except for broadcast.
#pragma once

#include <vector>

#include "hwbench/gpu/bench_context.h"

namespace stepscope::hwbench::gpu {

using model::CollectiveResult;

// `gpus`: how many visible GPUs take part (0: all).
std::vector<CollectiveResult> run_collectives(const BenchContext& ctx, int gpus);

}  // namespace stepscope::hwbench::gpu
