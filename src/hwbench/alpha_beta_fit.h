// The α-β (latency-bandwidth, Hockney) model of a collective: one call of
// `bytes` takes t = α + bytes / β. Fitted separately over the size ranges
// where NCCL typically runs each protocol, because each protocol has its own
// fixed cost and its own bandwidth; one line over 8 B to 4 GiB fits neither end.
#pragma once

#include <cstdint>
#include <vector>

#include "model/hardware_profile.h"

namespace stepscope::hwbench {

using model::AlphaBetaFit;

struct TimedSize {
  int64_t bytes = 0;
  double seconds = 0;
};

// A size range [min_bytes, max_bytes) named after the protocol NCCL usually
// picks there.
struct SizeRange {
  const char* name;
  int64_t min_bytes;
  int64_t max_bytes;
};

// Nominal protocol ranges: LL below 64 KiB, LL128 from 64 KiB to 16 MiB,
// Simple above. NCCL's tuner moves these thresholds with rank count and
// topology (NCCL_PROTO pins them), so they are labels for the fit ranges,
// not a claim about which protocol ran.
const std::vector<SizeRange>& default_protocol_ranges();

// Weighted least squares of seconds = α + bytes · s over `points`, weights
// 1/seconds² so each point counts by its relative error (sizes span nine
// orders of magnitude; unweighted, the largest sizes alone would set α).
// β = 1/s in GB/s, 0 when s <= 0 (time did not grow with size). r2 is the
// weighted coefficient of determination. Needs two distinct sizes, else
// points = count and α = mean time, β = 0, r2 = 0.
AlphaBetaFit fit_alpha_beta(const std::vector<TimedSize>& points);

// One fit per range that holds at least two sizes; `range`, min/max_bytes
// name the sizes actually fitted.
std::vector<AlphaBetaFit> fit_per_range(const std::vector<TimedSize>& points, const std::vector<SizeRange>& ranges);

}  // namespace stepscope::hwbench
