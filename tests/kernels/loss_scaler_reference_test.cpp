// The loss scaler's CPU reference against hand-worked GradScaler semantics:
// unscaled values, non-finite counts per tensor, the growth/backoff
// trajectory, no growth to inf, and argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/bf16.h"
#include "kernels/fp16.h"
#include "kernels/loss_scaler_reference.h"

namespace stepscope::kernels {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(LossScalerReference, InverseScaleIsTheFp64Reciprocal) {
  EXPECT_EQ(inverse_scale(65536.0f), 1.0f / 65536.0f);
  EXPECT_EQ(inverse_scale(3.0f), static_cast<float>(1.0 / 3.0));
  EXPECT_EQ(inverse_scale(0.0f), kInf);
}

TEST(LossScalerReference, UnscalesAndCountsPerTensor) {
  std::vector<float> a{4.0f, -8.0f, kInf, 2.0f, std::nanf("")};
  std::vector<float> b{1.0f, 3.0f};
  std::vector<float> c;  // an empty gradient is allowed and counts 0
  const HostGrad grads[] = {{GradDType::kFloat32, a.data(), 5}, {GradDType::kFloat32, c.data(), 0},
                            {GradDType::kFloat32, b.data(), 2}};
  const UnscaleCheckResult r = unscale_and_check_reference(grads, 0.25f);
  EXPECT_TRUE(r.found_inf);
  ASSERT_EQ(r.nonfinite.size(), 3u);
  EXPECT_EQ(r.nonfinite[0], 2);
  EXPECT_EQ(r.nonfinite[1], 0);
  EXPECT_EQ(r.nonfinite[2], 0);
  EXPECT_EQ(a[0], 1.0f);
  EXPECT_EQ(a[1], -2.0f);
  EXPECT_EQ(a[2], kInf);
  EXPECT_EQ(a[3], 0.5f);
  EXPECT_TRUE(std::isnan(a[4]));
  EXPECT_EQ(b[0], 0.25f);
  EXPECT_EQ(b[1], 0.75f);
}

TEST(LossScalerReference, SixteenBitGradientsRoundOnce) {
  // bf16 1 + 2^-7 (0x3F81) times 1/2 is exact; times 3 it is 3 + 3 * 2^-7
  // = 3.0234375, exactly halfway between bf16 3.015625 (0x4041, odd) and
  // 3.03125 (0x4042, even): ties to even give 0x4042.
  std::vector<uint16_t> bf{0x3F81, 0x3F81, 0x7F80};
  std::vector<uint16_t> h{0x3C01, 0x7BFF};  // fp16 1 + 2^-10, 65504
  const HostGrad grads[] = {{GradDType::kBFloat16, bf.data(), 3}, {GradDType::kFloat16, h.data(), 2}};
  std::vector<uint16_t> bf2{0x3F81};
  const HostGrad half_grad[] = {{GradDType::kBFloat16, bf2.data(), 1}};
  EXPECT_FALSE(unscale_and_check_reference(half_grad, 0.5f).found_inf);
  EXPECT_EQ(bf2[0], 0x3F01);  // (1 + 2^-7) / 2

  const UnscaleCheckResult r = unscale_and_check_reference(grads, 3.0f);
  EXPECT_EQ(bf[0], 0x4042);
  EXPECT_EQ(bf[2], 0x7F80);            // inf stays inf
  EXPECT_EQ(r.nonfinite[0], 1);
  EXPECT_EQ(h[1], 0x7C00);             // 65504 * 3 overflows fp16 after the multiply...
  EXPECT_EQ(r.nonfinite[1], 0);        // ...but the check is on the input, as in torch
  // fp16 (1 + 2^-10) * 3 = 3 + 3 * 2^-10: fp16 spacing at 3 is 2^-9, so it is
  // halfway between 3 + 2^-9 (mantissa odd) and 3 + 2^-8 (even) -> 3 + 2^-8.
  EXPECT_EQ(fp16_to_float(h[0]), 3.0f + std::ldexp(1.0f, -8));
}

TEST(LossScalerReference, InverseOneOnlyChecks) {
  const uint32_t payload_nan = 0x7FC01234u;
  float nan_with_payload;
  std::memcpy(&nan_with_payload, &payload_nan, sizeof nan_with_payload);
  std::vector<float> a{1.5f, nan_with_payload, -kInf};
  const HostGrad grads[] = {{GradDType::kFloat32, a.data(), 3}};
  const UnscaleCheckResult r = unscale_and_check_reference(grads, 1.0f);
  EXPECT_TRUE(r.found_inf);
  EXPECT_EQ(r.nonfinite[0], 2);
  uint32_t bits;
  std::memcpy(&bits, &a[1], sizeof bits);
  EXPECT_EQ(bits, payload_nan);  // untouched, not even canonicalized
  EXPECT_EQ(a[0], 1.5f);
}

TEST(LossScalerReference, CountsMatchInjectedNonFinites) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::vector<std::vector<float>> data;
  std::vector<HostGrad> grads;
  std::vector<int64_t> expected;
  for (int64_t n : {1, 7, 8191, 8193, 30011}) {
    std::vector<float> v(static_cast<size_t>(n), 1.0f);
    std::uniform_int_distribution<int64_t> pos(0, n - 1);
    std::vector<bool> hit(static_cast<size_t>(n), false);
    int64_t bad = 0;
    for (int j = 0; j < 5; ++j) {
      const int64_t p = pos(rng);
      if (!hit[p]) ++bad;
      hit[p] = true;
      v[p] = j % 2 ? std::nanf("") : -kInf;
    }
    expected.push_back(bad);
    data.push_back(std::move(v));
  }
  for (auto& v : data) grads.push_back({GradDType::kFloat32, v.data(), static_cast<int64_t>(v.size())});
  const UnscaleCheckResult r = unscale_and_check_reference(grads, 0.5f);
  EXPECT_EQ(r.nonfinite, expected);
  for (auto& v : data) {
    for (float x : v) {
      if (std::isfinite(x)) {
        ASSERT_EQ(x, 0.5f);
      }
    }
  }
}

TEST(LossScalerReference, RejectsBadTensors) {
  const HostGrad null_data[] = {{GradDType::kFloat32, nullptr, 3}};
  EXPECT_THROW(unscale_and_check_reference(null_data, 0.5f), std::invalid_argument);
  float x = 1;
  const HostGrad negative[] = {{GradDType::kFloat32, &x, -1}};
  EXPECT_THROW(unscale_and_check_reference(negative, 0.5f), std::invalid_argument);
  const HostGrad bad_dtype[] = {{static_cast<GradDType>(7), &x, 1}};
  EXPECT_THROW(unscale_and_check_reference(bad_dtype, 0.5f), std::invalid_argument);
}

TEST(LossScalerReference, GrowthAndBackoffTrajectory) {
  ScaleState s{1024.0f, 0};
  // interval 3: two good steps count, the third grows x2 and resets.
  update_scale_reference(s, 0.0f, 2.0, 0.5, 3);
  EXPECT_EQ(s.scale, 1024.0f);
  EXPECT_EQ(s.growth_tracker, 1);
  update_scale_reference(s, 0.0f, 2.0, 0.5, 3);
  EXPECT_EQ(s.growth_tracker, 2);
  update_scale_reference(s, 0.0f, 2.0, 0.5, 3);
  EXPECT_EQ(s.scale, 2048.0f);
  EXPECT_EQ(s.growth_tracker, 0);
  // A skipped step halves and resets the count of good steps.
  update_scale_reference(s, 0.0f, 2.0, 0.5, 3);
  update_scale_reference(s, 1.0f, 2.0, 0.5, 3);
  EXPECT_EQ(s.scale, 1024.0f);
  EXPECT_EQ(s.growth_tracker, 0);
  // found_inf summed over two optimizers (2.0) and NaN both mean "found".
  update_scale_reference(s, 2.0f, 2.0, 0.5, 3);
  update_scale_reference(s, std::nanf(""), 2.0, 0.5, 3);
  EXPECT_EQ(s.scale, 256.0f);
}

TEST(LossScalerReference, NeverGrowsToInfinity) {
  ScaleState s{std::ldexp(1.0f, 127), 0};
  update_scale_reference(s, 0.0f, 2.0, 0.5, 1);
  EXPECT_EQ(s.scale, std::ldexp(1.0f, 127));  // 2^128 is inf in fp32: kept
  EXPECT_EQ(s.growth_tracker, 0);             // but the count still resets
}

TEST(LossScalerReference, FactorsMultiplyInDouble) {
  // 3 * 0.3 in double, rounded to float, is 0x3F666666; in float arithmetic
  // (3.0f * 0.3f) it would be 0x3F666667. Growth likewise: 3 * 1.3 is
  // 0x4079999A in double, 0x40799999 in float.
  ScaleState s{3.0f, 0};
  update_scale_reference(s, 1.0f, 2.0, 0.3, 2000);
  uint32_t bits;
  std::memcpy(&bits, &s.scale, sizeof bits);
  EXPECT_EQ(bits, 0x3F666666u);
  ScaleState g{3.0f, 0};
  update_scale_reference(g, 0.0f, 1.3, 0.5, 1);
  std::memcpy(&bits, &g.scale, sizeof bits);
  EXPECT_EQ(bits, 0x4079999Au);
}

}  // namespace
}  // namespace stepscope::kernels
