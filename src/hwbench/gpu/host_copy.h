// Host↔device copy bandwidth from pinned (cudaMallocHost) and pageable
// (plain heap) host memory, one direction at a time.
#pragma once

#include <vector>

#include "hwbench/gpu/bench_context.h"

namespace stepscope::hwbench::gpu {

using model::BandwidthResult;

// h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable: 256 MiB copies (64 MiB with quick).
std::vector<BandwidthResult> run_host_copy(const BenchContext& ctx);

}  // namespace stepscope::hwbench::gpu
