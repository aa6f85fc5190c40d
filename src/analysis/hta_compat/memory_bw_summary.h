// HTA's memory bandwidth summary for one rank (docs/hta_compat.md §8): the
// combined bandwidth of concurrent memcpy/memset operations of each kind.
#pragma once

#include <vector>

#include "analysis/hta_compat/hta_frame.h"
#include "analysis/hta_compat/hta_result.h"

namespace stepscope::analysis::hta {

struct HtaMemoryBwOutcome {
  std::vector<HtaMemoryBwRow> rows;
  bool has_memory_kernels = false;  // false: HTA's table fails (AttributeError) unless another rank has some
};

// MEMORY stream rows, grouped by memory_kernel_group(name). Each adds its
// bandwidth at ts and removes it at ts + dur (dur 0 counts as 1 µs); all
// starts then all ends, sorted by time (numpy's unstable sort); per group
// (by name) the running sum, values > 0 kept; describe() of them. A group
// with no positive value has no row.
HtaMemoryBwOutcome hta_memory_bw_summary(const HtaRankFrame& frame);

}  // namespace stepscope::analysis::hta
