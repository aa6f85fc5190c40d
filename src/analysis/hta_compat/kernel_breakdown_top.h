// HTA's top-kernel table for one rank (docs/hta_compat.md §7): per kernel type,
// the kernels that make up most of the time, the rest folded into "others".
#pragma once

#include <vector>

#include "analysis/hta_compat/hta_frame.h"
#include "analysis/hta_compat/hta_result.h"

namespace stepscope::analysis::hta {

struct HtaTopOptions {
  int num_kernels = 5;          // kernels kept by position (the conformance harness used 5)
  double duration_ratio = 0.8;  // quantile of the cumulative sums above which kernels fold
};

// Per type: stats of dur by name; names by sum descending (numpy's unstable
// sort of the name-sorted table). With more than num_kernels names, a name
// with sum >= 0 becomes "others" when its cumulative sum exceeds the
// duration_ratio quantile of the cumulative sums or its position is
// num_kernels or later; then every row is regrouped over the per-name sums
// (a named row: max = min = mean = sum, stddev 0). Rows of this rank, by
// (kernel_type, name).
std::vector<HtaKernelTopRow> hta_kernel_breakdown_top(const HtaRankFrame& frame, const HtaTopOptions& options = {});

// HTA's order of the pooled table: (kernel type name, kernel name, rank), stable.
void sort_kernel_top_rows(std::vector<HtaKernelTopRow>& rows);

}  // namespace stepscope::analysis::hta
