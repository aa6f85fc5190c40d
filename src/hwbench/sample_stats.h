// Summaries of repeated timings. Medians, not means: one preempted or
// clock-ramping repeat must not move a ceiling.
#pragma once

#include <vector>

namespace stepscope::hwbench {

// Median of `values` (mean of the two middle values for an even count); 0 when empty.
double median(std::vector<double> values);

// Relative spread (max − min) / median; 0 when empty or the median is 0.
double relative_spread(const std::vector<double>& values);

}  // namespace stepscope::hwbench
