// HTA's idle time breakdown for one rank (docs/hta_compat.md §5): every gap
// between consecutive kernels of a stream is blamed on the host (the next
// kernel's launch started after the previous kernel ended), on kernel
// scheduling (a short gap), or on something else.
#pragma once

#include <vector>

#include "analysis/hta_compat/hta_frame.h"
#include "analysis/hta_compat/hta_result.h"

namespace stepscope::analysis::hta {

inline constexpr const char* kHtaNoIdleRowsError = "ValueError: No objects to concatenate";

// Kernels here are stream rows whose category is a kernel/memcpy/memset one
// (not cuda_sync, not annotations). Per stream (in order of first
// appearance), kernels sorted by ts (numpy's unstable sort); the gap before
// kernel i is ts_i - end_{i-1}:
//   host_wait   the launch (the row at index_correlation) started after end_{i-1};
//   kernel_wait otherwise, if the gap < consecutive_kernel_delay_us (negative gaps included);
//   other       otherwise; the stream's first kernel is "other" with no gap.
// Rows only for categories that occur, in that order.
std::vector<HtaIdleRow> hta_idle_time_breakdown(const HtaRankFrame& frame, double consecutive_kernel_delay_us = 30);

}  // namespace stepscope::analysis::hta
