// HTA's temporal breakdown for one rank (docs/hta_compat.md §3): kernel time
// is the span of all stream rows, idle its part outside their union, compute
// the union of COMPUTATION rows, non-compute the rest.
#pragma once

#include <string>

#include "analysis/hta_compat/hta_frame.h"
#include "analysis/hta_compat/hta_result.h"

namespace stepscope::analysis::hta {

inline constexpr const char* kHtaNoKernelsError = "IndexError: single positional indexer is out-of-bounds";
inline constexpr const char* kHtaAssertionError = "AssertionError: ";

struct HtaTemporalOutcome {
  HtaTemporalRow row;     // HTA's row; when HTA fails, the sensible answer (see below)
  std::string hta_error;  // what HTA raises for this rank, empty when it answers
};

// When the rank has no stream rows HTA raises IndexError: the row is all zero
// with no_gpu_events set. When negative durations (from HTA's µs rounding)
// make non-compute negative HTA's assertion fails: the row is recomputed with
// those durations clamped to 0, which keeps every part >= 0 and their sum
// equal to kernel time, and clamped_negative_durations says how many.
HtaTemporalOutcome hta_temporal_breakdown(const HtaRankFrame& frame);

}  // namespace stepscope::analysis::hta
