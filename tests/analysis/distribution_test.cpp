// summarize() selects only the order statistics its percentiles need; these
// tests hold it to a full sort on fresh random samples of every small size and
// some large ones, with ties, and to hand-computed values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "analysis/distribution.h"

namespace stepscope::analysis {
namespace {

TEST(Distribution, HandComputedFiveValues) {
  std::vector<double> v = {5, 1, 4, 2, 3};
  Distribution d = summarize(v);
  EXPECT_EQ(d.count, 5);
  EXPECT_DOUBLE_EQ(d.mean, 3.0);
  EXPECT_DOUBLE_EQ(d.stddev, std::sqrt(2.5));  // squared deviations 4+1+0+1+4 = 10, / (5-1)
  EXPECT_DOUBLE_EQ(d.min, 1);
  EXPECT_DOUBLE_EQ(d.max, 5);
  EXPECT_DOUBLE_EQ(d.p25, 2);    // position 0.25*4 = 1
  EXPECT_DOUBLE_EQ(d.p50, 3);
  EXPECT_DOUBLE_EQ(d.p90, 4.6);  // position 3.6: 4 + 0.6*(5-4)
  EXPECT_DOUBLE_EQ(d.p99, 4.96);
}

TEST(Distribution, SelectionMatchesAFullSortOnRandomSamples) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::vector<size_t> sizes;
  for (size_t n = 1; n <= 40; ++n) sizes.push_back(n);
  for (size_t n : {101, 1000, 4097, 100000}) sizes.push_back(n);
  for (size_t n : sizes) {
    for (int ties = 0; ties < 2; ++ties) {
      std::vector<double> v(n);
      std::uniform_real_distribution<double> real(-1e6, 1e6);
      std::uniform_int_distribution<int> few(0, 3);  // many equal values
      for (double& x : v) x = ties ? few(rng) : real(rng);
      std::vector<double> sorted = v;
      std::sort(sorted.begin(), sorted.end());
      Distribution d = summarize(v);
      // Order statistics exactly; interpolated percentiles to a few ulps of
      // the sample's scale (the compiler may contract a + (b - a) * f into
      // an FMA at one call site and not at another). A wrong order statistic
      // is off by the gap between samples, many orders of magnitude more.
      const double tol = 8 * std::numeric_limits<double>::epsilon() *
                         (std::abs(sorted.front()) + std::abs(sorted.back()) + 1);
      EXPECT_EQ(d.min, sorted.front()) << n;
      EXPECT_EQ(d.max, sorted.back()) << n;
      EXPECT_NEAR(d.p25, percentile_sorted(sorted, 0.25), tol) << n;
      EXPECT_NEAR(d.p50, percentile_sorted(sorted, 0.50), tol) << n;
      EXPECT_NEAR(d.p75, percentile_sorted(sorted, 0.75), tol) << n;
      EXPECT_NEAR(d.p90, percentile_sorted(sorted, 0.90), tol) << n;
      EXPECT_NEAR(d.p99, percentile_sorted(sorted, 0.99), tol) << n;
      std::sort(v.begin(), v.end());
      EXPECT_EQ(v, sorted) << "summarize must only reorder the sample, n=" << n;
    }
  }
}

TEST(Distribution, EmptyIsAllZeros) {
  std::vector<double> v;
  Distribution d = summarize(v);
  EXPECT_EQ(d.count, 0);
  EXPECT_EQ(d.p99, 0);
}

}  // namespace
}  // namespace stepscope::analysis
