#include "hwbench/alpha_beta_fit.h"

#include <gtest/gtest.h>

namespace stepscope::hwbench {

using model::AlphaBetaFit;
namespace {

// t = α + b/β with α in µs and β in GB/s.
TimedSize point(int64_t bytes, double alpha_us, double beta_gbps) {
  return {bytes, alpha_us * 1e-6 + static_cast<double>(bytes) / (beta_gbps * 1e9)};
}

TEST(AlphaBetaFit, RecoversAnExactLine) {
  // α = 5 µs, β = 100 GB/s: 1 kB -> 5.01 µs, 1 MB -> 15 µs, 1 GB -> 10.005 ms.
  AlphaBetaFit f = fit_alpha_beta({point(1000, 5, 100), point(1000000, 5, 100), point(1000000000, 5, 100)});
  EXPECT_NEAR(f.alpha_us, 5, 1e-6);
  EXPECT_NEAR(f.beta_gbps, 100, 1e-6);
  EXPECT_NEAR(f.r2, 1, 1e-9);
  EXPECT_EQ(f.points, 3);
  EXPECT_EQ(f.min_bytes, 1000);
  EXPECT_EQ(f.max_bytes, 1000000000);
}

TEST(AlphaBetaFit, RelativeWeightsKeepTheSmallSizesLatency) {
  // Two exact small points (α = 10 µs, β = 50 GB/s) and one large point 10%
  // slow. Unweighted least squares would pull α far from 10 µs; with 1/t²
  // weights the small points' 0% error dominates: α stays within 1 µs.
  TimedSize big = point(int64_t{1} << 30, 10, 50);
  big.seconds *= 1.10;
  AlphaBetaFit f = fit_alpha_beta({point(8, 10, 50), point(4096, 10, 50), point(1 << 20, 10, 50), big});
  EXPECT_NEAR(f.alpha_us, 10, 1.0);
  EXPECT_LT(f.r2, 1.0);
}

TEST(AlphaBetaFit, FlatTimesGiveNoBandwidth) {
  // Times that fall with size: slope < 0 -> β reported as 0 (no bandwidth term).
  AlphaBetaFit f = fit_alpha_beta({{8, 12e-6}, {64, 11e-6}, {512, 10e-6}});
  EXPECT_EQ(f.beta_gbps, 0);
}

TEST(AlphaBetaFit, OneSizeGivesMeanTimeOnly) {
  // Two timings of one size: no slope; α = mean = (4 + 6) / 2 = 5 µs.
  AlphaBetaFit f = fit_alpha_beta({{1024, 4e-6}, {1024, 6e-6}});
  EXPECT_NEAR(f.alpha_us, 5, 1e-9);
  EXPECT_EQ(f.beta_gbps, 0);
  EXPECT_EQ(f.r2, 0);
}

TEST(AlphaBetaFit, FitsEachProtocolRangeSeparately) {
  // ll (< 64 KiB): α 4 µs, β 10 GB/s; ll128 (64 KiB .. 16 MiB): 8 µs, 100;
  // simple (>= 16 MiB): 20 µs, 300 GB/s; two sizes in each range.
  std::vector<TimedSize> pts = {point(1024, 4, 10),          point(32768, 4, 10),
                                point(65536, 8, 100),        point(int64_t{4} << 20, 8, 100),
                                point(int64_t{16} << 20, 20, 300), point(int64_t{1} << 30, 20, 300)};
  std::vector<AlphaBetaFit> fits = fit_per_range(pts, default_protocol_ranges());
  ASSERT_EQ(fits.size(), 3u);
  EXPECT_EQ(fits[0].range, "ll");
  EXPECT_NEAR(fits[0].alpha_us, 4, 1e-6);
  EXPECT_NEAR(fits[0].beta_gbps, 10, 1e-6);
  EXPECT_EQ(fits[1].range, "ll128");
  EXPECT_NEAR(fits[1].alpha_us, 8, 1e-6);
  EXPECT_NEAR(fits[1].beta_gbps, 100, 1e-4);
  EXPECT_EQ(fits[2].range, "simple");
  EXPECT_NEAR(fits[2].alpha_us, 20, 1e-4);
  EXPECT_NEAR(fits[2].beta_gbps, 300, 1e-3);
}

TEST(AlphaBetaFit, RangeWithOneSizeIsSkipped) {
  std::vector<TimedSize> pts = {point(8, 4, 10), point(1024, 4, 10), point(1 << 20, 8, 100)};
  std::vector<AlphaBetaFit> fits = fit_per_range(pts, default_protocol_ranges());
  ASSERT_EQ(fits.size(), 1u);
  EXPECT_EQ(fits[0].range, "ll");
}

}  // namespace
}  // namespace stepscope::hwbench
