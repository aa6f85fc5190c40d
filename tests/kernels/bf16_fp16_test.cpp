// The 16-bit conversions every kernels reference relies on, against values
// worked out by hand from the IEEE formats (not against another converter).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/bf16.h"
#include "kernels/fp16.h"

namespace stepscope::kernels {
namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

TEST(Bf16, WidensExactly) {
  EXPECT_EQ(bf16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_float(0xC040), -3.0f);
  EXPECT_EQ(bf16_to_float(0x0001), from_bits(0x00010000u));  // smallest subnormal
  EXPECT_TRUE(std::isinf(bf16_to_float(0x7F80)));
  EXPECT_TRUE(std::isnan(bf16_to_float(0x7FC1)));
}

TEST(Bf16, RoundsToNearestEven) {
  // 1 + 2^-8 is halfway between bf16 1.0 (0x3F80, even) and 1 + 2^-7 (0x3F81): ties to even.
  EXPECT_EQ(float_to_bf16_rne(from_bits(0x3F808000u)), 0x3F80);
  // 1 + 3 * 2^-8 is halfway between 0x3F81 (odd) and 0x3F82: up to even.
  EXPECT_EQ(float_to_bf16_rne(from_bits(0x3F818000u)), 0x3F82);
  // Just above halfway rounds up, just below rounds down.
  EXPECT_EQ(float_to_bf16_rne(from_bits(0x3F808001u)), 0x3F81);
  EXPECT_EQ(float_to_bf16_rne(from_bits(0x3F807FFFu)), 0x3F80);
  // The largest float rounds up to infinity (its upper half is odd and the rest past halfway).
  EXPECT_EQ(float_to_bf16_rne(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(float_to_bf16_rne(-0.0f), 0x8000);
}

TEST(Bf16, NaNStaysNaN) {
  // A NaN whose payload lies only in the low 16 bits would become inf if truncated.
  const uint16_t b = float_to_bf16_rne(from_bits(0x7F800001u));
  EXPECT_TRUE(std::isnan(bf16_to_float(b)));
  EXPECT_EQ(float_to_bf16_rne(from_bits(0xFFC00000u)) & 0x8000, 0x8000);  // sign kept
}

TEST(Fp16, WidensExactly) {
  EXPECT_EQ(fp16_to_float(0x3C00), 1.0f);
  EXPECT_EQ(fp16_to_float(0xC200), -3.0f);
  EXPECT_EQ(fp16_to_float(0x7BFF), 65504.0f);                 // largest finite
  EXPECT_EQ(fp16_to_float(0x0001), std::ldexp(1.0f, -24));    // smallest subnormal
  EXPECT_EQ(fp16_to_float(0x03FF), 1023 * std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(fp16_to_float(0xFC00)));
  EXPECT_TRUE(std::isnan(fp16_to_float(0x7E01)));
}

TEST(Fp16, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 (0x3C00) and 1 + 2^-10 (0x3C01): ties to even.
  EXPECT_EQ(float_to_fp16_rne(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(float_to_fp16_rne(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  // 65520 is halfway between 65504 and 65536 (not representable): rounds to inf.
  EXPECT_EQ(float_to_fp16_rne(65519.0f), 0x7BFF);
  EXPECT_EQ(float_to_fp16_rne(65520.0f), 0x7C00);
  // Subnormals: 2^-25 is halfway between 0 and 2^-24 -> 0 (even); 3 * 2^-25 -> 2 * 2^-24.
  EXPECT_EQ(float_to_fp16_rne(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(float_to_fp16_rne(std::ldexp(1.0f, -25) * 1.0001f), 0x0001);
  EXPECT_EQ(float_to_fp16_rne(3 * std::ldexp(1.0f, -25)), 0x0002);
  // The largest subnormal rounds up into the smallest normal (0x0400 = 2^-14).
  EXPECT_EQ(float_to_fp16_rne(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -26)), 0x0400);
  EXPECT_EQ(float_to_fp16_rne(-2.0f), 0xC000);
  EXPECT_TRUE(std::isnan(fp16_to_float(float_to_fp16_rne(std::nanf("")))));
}

TEST(Fp16, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const float f = fp16_to_float(bits);
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_fp16_rne(f), bits) << "half 0x" << std::hex << h;
  }
}

TEST(Bf16, EveryBf16RoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const float f = bf16_to_float(bits);
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_bf16_rne(f), bits) << "bf16 0x" << std::hex << h;
  }
}

}  // namespace
}  // namespace stepscope::kernels
