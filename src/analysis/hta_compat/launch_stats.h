// HTA's kernel launch statistics for one rank (docs/hta_compat.md §8): each
// launch call paired with the GPU work it launched.
#pragma once

#include "analysis/hta_compat/hta_frame.h"
#include "analysis/hta_compat/hta_result.h"

namespace stepscope::analysis::hta {

// Launch correlations: of rows named cudaLaunchKernel, cudaLaunchKernelExC,
// cudaMemsetAsync, cudaMemcpyAsync or MTIA's job submit. Every stream-less row
// with such a correlation is paired with every stream row with the same one;
// per pair: cpu_duration = launch dur, gpu_duration = kernel dur,
// launch_delay = max(kernel ts - launch end, 0). describe() of each column.
HtaLaunchStats hta_launch_stats(const HtaRankFrame& frame);

}  // namespace stepscope::analysis::hta
