// HTA's kernel type breakdown (docs/hta_compat.md §4): how long each set of
// kernel types ran at the same time ("COMPUTATION overlapping COMMUNICATION"),
// per rank, then pooled over ranks.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analysis/hta_compat/hta_frame.h"
#include "analysis/hta_compat/hta_result.h"

namespace stepscope::analysis::hta {

// (label, µs) in the order labels first contribute. A label can have 0 µs:
// HTA emits it when equal-time boundaries sort with it running in between.
using HtaTypeSums = std::vector<std::pair<std::string, int64_t>>;

// One rank: the merged intervals of each type become +bit/-bit boundaries,
// re-sorted (numpy's unstable sort) after each type is appended; every
// stretch between consecutive boundaries with a positive running sum adds its
// length, truncated to whole µs as HTA's int() does, to the label of the bits set.
HtaTypeSums hta_kernel_type_sums(const HtaRankFrame& frame);

// Pools ranks' sums into HTA's table: sum per label over ranks, percentage
// round(sum / total * 100, 1), rows by sum descending (ties in first-seen order).
std::vector<HtaKernelTypeRow> hta_kernel_type_table(const std::vector<HtaTypeSums>& per_rank);

}  // namespace stepscope::analysis::hta
