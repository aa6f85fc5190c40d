// Device-memory and L2 bandwidth: read, write, copy and triad kernels with
// 16-byte accesses over rotating buffers much larger than L2, and a read of
// an L2-resident buffer.
#pragma once

#include <vector>

#include "hwbench/gpu/bench_context.h"

namespace stepscope::hwbench::gpu {

using model::BandwidthResult;

// hbm_read, hbm_write, hbm_copy, hbm_triad (bytes read + written each;
// copy and triad are the fastest of their layouts, each also reported:
// hbm_copy_gridstride, hbm_copy_tiled, hbm_copy_tiled_cs,
// hbm_triad_gridstride, hbm_triad_tiled), hbm_copy_memcpy (cudaMemcpyAsync
// device to device, for comparison), l2_read. Pool: 4 GiB (1 GiB with
// quick), cut into 4 rotating arrays.
std::vector<BandwidthResult> run_memory_bandwidth(const BenchContext& ctx);

}  // namespace stepscope::hwbench::gpu
