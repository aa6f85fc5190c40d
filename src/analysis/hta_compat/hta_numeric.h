// The numeric helpers HTA's outputs go through: numpy's round, numpy's
// linear quantile and pandas' Series.describe(). Missing values (pandas NaN)
// are std::nullopt.
#pragma once

#include <optional>
#include <vector>

namespace stepscope::analysis::hta {

// numpy.round(x, decimals): rint(x * 10^d) / 10^d, half to even.
double round_np(double x, int decimals);

// numpy.percentile(sorted, 100 * q, method="linear") of ascending values
// (pandas' Series.quantile): index (n - 1) * q, interpolated as numpy's _lerp.
double linear_quantile(const std::vector<double>& sorted, double q);

// pandas Series.describe() of a numeric series.
struct HtaDescribe {
  double count = 0;             // number of values
  std::optional<double> mean;   // arithmetic mean; nullopt when count == 0
  std::optional<double> std;    // sample standard deviation (n - 1); nullopt when count < 2
  std::optional<double> min;
  std::optional<double> p25;    // "25%": linear quantile
  std::optional<double> p50;    // "50%"
  std::optional<double> p75;    // "75%"
  std::optional<double> max;
};

HtaDescribe describe(std::vector<double> values);

}  // namespace stepscope::analysis::hta
