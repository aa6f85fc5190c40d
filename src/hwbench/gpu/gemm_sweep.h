// Maximum achievable matmul FLOP/s: cuBLASLt D = Aᵀ·B ("TN", the layout
// cuBLASLt's fp8 kernels require, used for every dtype) over a sweep of
// shapes for bf16, fp16, fp8 (e4m3 in, bf16 out), tf32 and fp32, each shape
// timed with the best of cuBLASLt's top heuristic algorithms, L2 flushed
// between repeats, inputs random. A sampled check against an independent
// double-precision reference runs first for each dtype.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hwbench/gpu/bench_context.h"

namespace stepscope::hwbench::gpu {

using model::GemmResult;

struct GemmShape {
  int64_t m, n, k;
};

// The sweep for one dtype (quick: the largest cube or two).
std::vector<GemmShape> gemm_shapes(const std::string& dtype, bool quick);

// Runs the sweep for each of `dtypes` the device supports (tf32/bf16 need
// compute capability 8.0, fp8 8.9; the others are skipped with a note).
std::vector<GemmResult> run_gemm_sweep(const BenchContext& ctx, const std::vector<std::string>& dtypes);

}  // namespace stepscope::hwbench::gpu
