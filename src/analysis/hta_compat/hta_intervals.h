// HTA's interval merge (docs/hta_compat.md §2, "Merged intervals"): the union
// of a set of frame rows as HTA computes it. Rows are ordered by numpy's
// unstable argsort on ts; a row starts a new group iff its ts is later than
// the largest end of all rows before it (so touching intervals merge), and a
// group is [min ts, max end]. A lone negative-duration row is a group of
// length -1, and which equal-ts row comes first can change the groups: hence
// the exact sort.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/hta_compat/hta_frame.h"

namespace stepscope::analysis::hta {

struct HtaInterval {
  double start = 0;  // µs
  double end = 0;    // µs
  double length() const { return end - start; }
};

// Merges frame.events[rows[i]] (rows in frame order); groups come out by start.
std::vector<HtaInterval> merge_hta_intervals(const std::vector<HtaEvent>& events, const std::vector<uint32_t>& rows);

// Rows of the frame on a stream (HTA's "kernels"), optionally of one type.
std::vector<uint32_t> stream_rows(const HtaRankFrame& frame);
std::vector<uint32_t> stream_rows_of_type(const HtaRankFrame& frame, HtaKernelType type);

// Σ length, summed in group order.
double total_length(const std::vector<HtaInterval>& groups);

}  // namespace stepscope::analysis::hta
