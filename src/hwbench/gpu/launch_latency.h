// Kernel launch latency of an empty kernel, three ways: one launch waited
// for (stream_roundtrip), many launches queued back to back (enqueue: host
// cost per launch; back_to_back: device time per kernel), and the same
// kernels replayed from a CUDA graph (graph_replay: device time per kernel).
#pragma once

#include <vector>

#include "hwbench/gpu/bench_context.h"

namespace stepscope::hwbench::gpu {

using model::LatencyResult;

std::vector<LatencyResult> run_launch_latency(const BenchContext& ctx);

}  // namespace stepscope::hwbench::gpu
