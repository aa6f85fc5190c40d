// CPU reference of block-wise activation compression: error bounds on fresh
// random inputs, the packing order and block parameters by hand, tail and
// constant blocks, non-finite blocks, stochastic rounding (deterministic per
// seed, unbiased), bad options.
#include "kernels/activation_quant_reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/activation_quant_format.h"
#include "kernels/bf16.h"

namespace stepscope::kernels {
namespace {

uint32_t fresh_seed() {
  std::random_device rd;
  return rd();
}

float scale_of(const ActQuantized& q, size_t i) { return aq::bf16_bits_value(q.scale[i / q.block]); }
float zero_of(const ActQuantized& q, size_t i) { return aq::bf16_bits_value(q.zero[i / q.block]); }

// The bound every finite element must meet: half a step for nearest rounding,
// one step for stochastic, plus the fp32 slack of computing (x - zero) * (1 / scale)
// (a few ulp of a value <= 255, i.e. < 1e-4 of a step) and of the final fma
// (half an ulp of the result).
bool within_bound(float x, float xr, float scale, bool stochastic) {
  const double step = stochastic ? 1.0 : 0.5;
  const double bound = scale * (step + 1e-4) + std::ldexp(std::fabs(static_cast<double>(xr)), -23) + 1e-44;
  return std::fabs(static_cast<double>(x) - xr) <= bound;
}

// Activations-like data: each block has its own offset and spread (so block
// scales differ by orders of magnitude), some blocks are bf16 values only.
std::vector<float> random_activations(std::mt19937& rng, size_t n, int block, bool bf16_values) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> log_spread(-6.0f, 3.0f);
  std::vector<float> x(n);
  float spread = 1.0f, offset = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    if (i % block == 0) {
      spread = std::pow(10.0f, log_spread(rng));
      offset = normal(rng) * spread * 3.0f;
    }
    x[i] = offset + spread * normal(rng);
    if (bf16_values) x[i] = round_to_bf16(x[i]);
  }
  return x;
}

struct Case {
  int bits, block;
  bool stochastic;
};

const Case kCases[] = {{4, 64, false}, {4, 128, false}, {8, 64, false}, {8, 128, false},
                       {4, 64, true},  {4, 128, true},  {8, 64, true},  {8, 128, true}};

TEST(ActivationQuantReference, RandomInputsMeetTheErrorBound) {
  const uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (const Case& c : kCases) {
    for (size_t n : {size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{129}, size_t{4099}, size_t{20000}}) {
      for (bool bf16_values : {false, true}) {
        SCOPED_TRACE("bits " + std::to_string(c.bits) + " block " + std::to_string(c.block) + " stochastic " +
                     std::to_string(c.stochastic) + " n " + std::to_string(n));
        const std::vector<float> x = random_activations(rng, n, c.block, bf16_values);
        const ActQuantized q = quantize_reference(x, {c.bits, c.block, c.stochastic, rng()});
        ASSERT_EQ(q.codes.size(), c.bits == 8 ? n : (n + 1) / 2);
        ASSERT_EQ(q.scale.size(), (n + c.block - 1) / c.block);
        const std::vector<float> xr = dequantize_reference(q);
        ASSERT_EQ(xr.size(), n);
        int bad = 0;
        for (size_t i = 0; i < n && bad < 5; ++i) {
          // zero is rounded down, so it never exceeds the block's values.
          if (zero_of(q, i) > x[i] || !within_bound(x[i], xr[i], scale_of(q, i), c.stochastic)) {
            ++bad;
            ADD_FAILURE() << "element " << i << ": x " << x[i] << " dequantized " << xr[i] << " scale "
                          << scale_of(q, i) << " zero " << zero_of(q, i);
          }
        }
      }
    }
  }
}

// bf16 inputs: zero is the exact minimum and the step the smallest bf16 >=
// range * fl(1/qmax): never smaller than range / qmax by more than the fp32
// rounding of the product, at most one bf16 step (2^-7 relative) larger.
TEST(ActivationQuantReference, ScaleIsTheRoundedUpRangeOverQmax) {
  const uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::vector<float> x = random_activations(rng, 64 * 200, 64, true);
  for (int bits : {4, 8}) {
    const ActQuantized q = quantize_reference(x, {bits, 64, false, 0});
    const double qmax = (1 << bits) - 1;
    for (size_t b = 0; b < q.scale.size(); ++b) {
      float mn = x[b * 64], mx = x[b * 64];
      for (size_t i = b * 64; i < (b + 1) * 64; ++i) mn = std::min(mn, x[i]), mx = std::max(mx, x[i]);
      EXPECT_EQ(aq::bf16_bits_value(q.zero[b]), mn) << "bf16 input: the minimum is exact";
      const double ideal = (static_cast<double>(mx) - mn) / qmax;
      const double s = aq::bf16_bits_value(q.scale[b]);
      EXPECT_GE(s, ideal * (1 - 1e-6)) << "block " << b;
      EXPECT_LE(s, ideal * (1 + 1.0 / 128 + 1e-6)) << "block " << b;
    }
  }
}

// Uniform data spread over the grid: nearest rounding's mean |error| is a
// quarter step for the 62 inner elements of a block and ~0 for its min and
// max, 0.25 * 62 / 64 = 0.242 in all; a floor (truncating) bug gives twice that.
TEST(ActivationQuantReference, NearestRoundingErrorIsAQuarterStepOnAverage) {
  const uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 3.0f);
  std::vector<float> x(1 << 16);
  for (float& v : x) v = u(rng);
  const ActQuantized q = quantize_reference(x, {4, 64, false, 0});
  const std::vector<float> xr = dequantize_reference(q);
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) sum += std::fabs(x[i] - xr[i]) / scale_of(q, i);
  EXPECT_NEAR(sum / x.size(), 0.25 * 62 / 64, 0.01);
}

// Packing order and block parameters worked out by hand: values 0..15 in one
// block give zero 0 and scale exactly 1, so each code is the value itself.
TEST(ActivationQuantReference, PackingOrderByHand) {
  std::vector<float> x(64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 16);  // 0 7 14 5 12 3 ...
  const ActQuantized q4 = quantize_reference(x, {4, 64, false, 0});
  EXPECT_EQ(q4.zero[0], float_to_bf16_rne(0.0f));
  EXPECT_EQ(q4.scale[0], float_to_bf16_rne(1.0f));
  ASSERT_EQ(q4.codes.size(), 32u);
  EXPECT_EQ(q4.codes[0], 0x70);  // element 0 (0) low nibble, element 1 (7) high
  EXPECT_EQ(q4.codes[1], 0x5E);  // 14, 5
  EXPECT_EQ(q4.codes[2], 0x3C);  // 12, 3
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(act_quant_code_at(q4, i), static_cast<uint32_t>(x[i]));

  // 8-bit, values 10 + 2k (k = 0..63): range 126 over 255 codes; scale is the
  // bf16 at or above 126/255 = 0.4941176..., i.e. 253 * 2^-9 = 0.494140625
  // (bf16 steps are 2^-9 in [0.25, 0.5)).
  for (size_t i = 0; i < x.size(); ++i) x[i] = 10.0f + 2.0f * i;
  const ActQuantized q8 = quantize_reference(x, {8, 64, false, 0});
  EXPECT_EQ(aq::bf16_bits_value(q8.zero[0]), 10.0f);
  EXPECT_EQ(aq::bf16_bits_value(q8.scale[0]), 0.494140625f);
  EXPECT_EQ(q8.codes[0], 0);
  EXPECT_EQ(q8.codes[1], 4);     // 2 / 0.494140625 = 4.05
  EXPECT_EQ(q8.codes[32], 130);  // 64 / 0.494140625 = 129.52
  EXPECT_EQ(q8.codes[63], 255);  // 126 / 0.494140625 = 254.99
  EXPECT_EQ(dequantize_reference(q8)[63], 136.005859375f);  // 10 + 255 * 0.494140625
}

// A tail block covers only the elements left; an odd element count leaves the
// last high nibble empty.
TEST(ActivationQuantReference, TailBlockUsesOnlyItsElements) {
  std::vector<float> x(64 + 3, -5.0f);
  x[64] = 100.0f, x[65] = 101.0f, x[66] = 102.0f;
  x[0] = 5.0f;
  const ActQuantized q = quantize_reference(x, {4, 64, false, 0});
  ASSERT_EQ(q.scale.size(), 2u);
  ASSERT_EQ(q.codes.size(), 34u);
  EXPECT_EQ(aq::bf16_bits_value(q.zero[1]), 100.0f);
  EXPECT_EQ(aq::bf16_bits_value(q.zero[0]), -5.0f);
  // 2 / 15 = 0.1333..., the bf16 at or above it is 0.1337890625.
  EXPECT_EQ(aq::bf16_bits_value(q.scale[1]), 0.1337890625f);
  EXPECT_EQ(q.codes[33] >> 4, 0) << "no element 67";
  EXPECT_EQ(act_quant_code_at(q, 66), 15u);  // 2 / 0.1337890625 = 14.95
  const std::vector<float> xr = dequantize_reference(q);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_TRUE(within_bound(x[i], xr[i], scale_of(q, i), false)) << i;
}

TEST(ActivationQuantReference, ConstantBlocks) {
  // A bf16 constant: scale 0, every code 0, dequantizes exactly.
  std::vector<float> x(128, -3.25f);
  ActQuantized q = quantize_reference(x, {8, 128, false, 0});
  EXPECT_EQ(q.scale[0], 0u);
  for (uint8_t c : q.codes) EXPECT_EQ(c, 0);
  for (float v : dequantize_reference(q)) EXPECT_EQ(v, -3.25f);
  // An fp32 constant that bf16 cannot hold: zero is the bf16 below it, and
  // the step covers the gap.
  std::fill(x.begin(), x.end(), 0.1f);
  q = quantize_reference(x, {4, 128, false, 0});
  EXPECT_LT(aq::bf16_bits_value(q.zero[0]), 0.1f);
  EXPECT_GT(q.scale[0], 0u);
  for (float v : dequantize_reference(q)) EXPECT_TRUE(within_bound(0.1f, v, aq::bf16_bits_value(q.scale[0]), false));
  // Zeros of both signs: +0, code 0, exact.
  std::fill(x.begin(), x.end(), 0.0f);
  x[3] = -0.0f;
  q = quantize_reference(x, {4, 64, false, 0});
  EXPECT_EQ(q.zero[0], 0u);
  EXPECT_EQ(q.scale[0], 0u);
}

TEST(ActivationQuantReference, RangesBelowTheSmallestNormalStepStillMeetTheBound) {
  std::vector<float> x(64, 0.0f);
  x[1] = 1e-39f;  // subnormal range / 15: scale is clamped to 2^-126
  x[2] = 5e-40f;
  const ActQuantized q = quantize_reference(x, {4, 64, false, 0});
  EXPECT_EQ(aq::bf16_bits_value(q.scale[0]), aq::kMinScale);
  const std::vector<float> xr = dequantize_reference(q);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_TRUE(within_bound(x[i], xr[i], aq::kMinScale, false)) << i;
}

TEST(ActivationQuantReference, NonFiniteValuesPoisonOnlyTheirBlock) {
  const float kNaN = std::numeric_limits<float>::quiet_NaN();
  const float kInf = std::numeric_limits<float>::infinity();
  for (float bad : {kNaN, kInf, -kInf}) {
    std::vector<float> x(64 * 3 + 5);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i));
    x[64 + 17] = bad;
    x[x.size() - 1] = bad;  // in the tail block
    const ActQuantized q = quantize_reference(x, {4, 64, false, 0});
    const std::vector<float> xr = dequantize_reference(q);
    for (size_t b : {size_t{1}, size_t{3}}) {
      EXPECT_TRUE(std::isnan(aq::bf16_bits_value(q.scale[b])));
      EXPECT_TRUE(std::isnan(aq::bf16_bits_value(q.zero[b])));
    }
    for (size_t i = 0; i < x.size(); ++i) {
      const size_t b = i / 64;
      if (b == 1 || b == 3) {
        EXPECT_TRUE(std::isnan(xr[i])) << i;
        EXPECT_EQ(act_quant_code_at(q, i), 0u) << i;
      } else {
        EXPECT_TRUE(within_bound(x[i], xr[i], scale_of(q, i), false)) << i;
      }
    }
  }
  // Finite values whose range overflows fp32 poison the block too.
  std::vector<float> x(64, 0.0f);
  x[0] = -3.0e38f, x[1] = 3.0e38f;
  const ActQuantized q = quantize_reference(x, {8, 64, false, 0});
  EXPECT_TRUE(std::isnan(dequantize_reference(q)[5]));
}

// Grid positions at a fixed fraction f of a step: nearest rounding is off by
// -f (or 1 - f) everywhere; stochastic rounding rounds up with probability f,
// so its mean error vanishes (tolerance: 6 standard errors of the mean).
TEST(ActivationQuantReference, StochasticRoundingIsUnbiased) {
  const uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> level(0, 14);
  for (float f : {0.1f, 0.3f, 0.7f, 0.875f}) {  // not 0.5: half-to-even is unbiased there
    const size_t n = 64 * 4096;
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) x[i] = (i % 64 == 0) ? 0.0f : (i % 64 == 1) ? 15.0f : level(rng) + f;
    const ActQuantized qs = quantize_reference(x, {4, 64, true, rng()});
    const ActQuantized qn = quantize_reference(x, {4, 64, false, 0});
    ASSERT_EQ(aq::bf16_bits_value(qs.scale[0]), 1.0f);
    const std::vector<float> xs = dequantize_reference(qs), xn = dequantize_reference(qn);
    double es = 0, en = 0;
    size_t ups = 0, m = 0;
    for (size_t i = 0; i < n; ++i) {
      if (i % 64 < 2) continue;
      es += xs[i] - x[i], en += xn[i] - x[i], ++m;
      ups += xs[i] > x[i];
    }
    SCOPED_TRACE("fraction " + std::to_string(f));
    const double sem = std::sqrt(f * (1 - f) / m);
    EXPECT_NEAR(es / m, 0.0, 6 * sem);
    EXPECT_NEAR(static_cast<double>(ups) / m, f, 6 * sem);
    EXPECT_GT(std::fabs(en / m), 0.09) << "nearest rounding is biased here: the test can tell";
  }
}

// Averaged over many seeds, the dequantized value of each element approaches
// the element itself: per element, |mean - x| <= s * (2^-9 + 2^-16 + 1e-4)
// (the dither's bias bound, plus the fp32 slack of t) + 6 standard errors of
// the mean of S draws (s * sqrt(f (1 - f) / S)) + the fma's half ulp. fp32
// inputs with arbitrary fractions f (bf16 inputs sit on multiples of 2^-4 of
// a step at 4 bits, where any 8-bit dither is exact).
TEST(ActivationQuantReference, StochasticMeanOverSeedsApproachesTheInput) {
  const uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> frac(0.0f, 1.0f);
  constexpr int kSeeds = 512;
  const size_t n = 16 * 64;
  for (int bits : {4, 8}) {
    SCOPED_TRACE("bits " + std::to_string(bits));
    const float qmax = static_cast<float>((1 << bits) - 1);
    std::uniform_int_distribution<int> level(0, (1 << bits) - 2);
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) x[i] = (i % 64 == 0) ? 0.0f : (i % 64 == 1) ? qmax : level(rng) + frac(rng);
    std::vector<double> sum(n, 0.0);
    const uint64_t s0 = (static_cast<uint64_t>(rng()) << 32) | rng();
    for (int k = 0; k < kSeeds; ++k) {
      const std::vector<float> xr = dequantize_reference(quantize_reference(x, {bits, 64, true, s0 + k}));
      for (size_t i = 0; i < n; ++i) sum[i] += xr[i];
    }
    const std::vector<float> xn = dequantize_reference(quantize_reference(x, {bits, 64, false, 0}));
    const ActQuantized q = quantize_reference(x, {bits, 64, true, s0});
    size_t nearest_outside = 0, m = 0;
    double total_bias = 0;
    for (size_t i = 0; i < n; ++i) {
      if (i % 64 < 2) continue;
      const double s = scale_of(q, i);
      const double t = (x[i] - zero_of(q, i)) / s;
      const double f = t - std::floor(t);
      const double slack = s * (std::ldexp(1.0, -9) + std::ldexp(1.0, -16) + 1e-4) + std::ldexp(std::fabs(x[i]), -23);
      const double bound = slack + 6 * s * std::sqrt(f * (1 - f) / kSeeds);
      const double mean = sum[i] / kSeeds;
      ASSERT_LE(std::fabs(mean - x[i]), bound) << "element " << i << " x " << x[i] << " mean " << mean;
      nearest_outside += std::fabs(xn[i] - x[i]) > bound;
      total_bias += (mean - x[i]) / s, ++m;
    }
    // All elements together: the mean bias in steps, within 6 standard errors.
    EXPECT_LE(std::fabs(total_bias / m), std::ldexp(1.0, -9) + 1e-4 + 6 * 0.5 / std::sqrt(double{kSeeds} * m));
    EXPECT_GT(nearest_outside, m / 2) << "nearest rounding misses this bound: the test can tell";
  }
}

TEST(ActivationQuantReference, StochasticCodesAreDeterministicPerSeed) {
  const uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::vector<float> x = random_activations(rng, 10000, 64, true);
  const uint64_t s = (static_cast<uint64_t>(rng()) << 32) | rng();
  const ActQuantized a = quantize_reference(x, {4, 64, true, s});
  const ActQuantized b = quantize_reference(x, {4, 64, true, s});
  const ActQuantized c = quantize_reference(x, {4, 64, true, s + 1});
  EXPECT_EQ(a.codes, b.codes);
  size_t differ = 0;
  for (size_t i = 0; i < x.size(); ++i) differ += act_quant_code_at(a, i) != act_quant_code_at(c, i);
  // Random data sits at uniform fractions: two seeds disagree on ~1/3 of codes.
  EXPECT_GT(differ, x.size() / 5);
  EXPECT_EQ(a.scale, c.scale);  // the block parameters do not depend on the seed
}

TEST(ActivationQuantReference, CounterHashIsUniform) {
  const uint64_t key = aq::mix_seed(fresh_seed());
  const size_t n = 1 << 20;
  std::vector<size_t> bins(16, 0);
  double mean = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t u = aq::uniform8(key, i);
    ASSERT_LT(u, 256u);
    ASSERT_EQ(aq::element_dither_bits(key, i), aq::kDitherOne | (u << 15));
    bins[u >> 4]++;
    mean += u / 256.0;
  }
  EXPECT_NEAR(mean / n, 127.5 / 256, 0.003);
  double chi2 = 0;
  for (size_t b : bins) chi2 += (b - n / 16.0) * (b - n / 16.0) / (n / 16.0);
  EXPECT_LT(chi2, 45.0);  // 15 degrees of freedom: p < 1e-4
  // The four bytes of a quad's word are independent draws: the XOR of
  // neighbours (0^1, 1^2, 2^3 within a quad) is uniform too.
  for (size_t k = 0; k < 3; ++k) {
    std::vector<size_t> xbins(16, 0);
    for (size_t i = k; i < n; i += 4) xbins[(aq::uniform8(key, i) ^ aq::uniform8(key, i + 1)) >> 4]++;
    double xchi2 = 0;
    for (size_t b : xbins) xchi2 += (b - n / 64.0) * (b - n / 64.0) / (n / 64.0);
    EXPECT_LT(xchi2, 45.0) << "bytes " << k << " and " << k + 1;
  }
}

// Over all 256 dither values the code rounds up with probability frac(t) to
// within 2^-9 + 2^-16 (the resolution of u with its centring half, plus the
// fp32 rounding of t + v): exhaustive over u, for random t at both widths.
// Without the half (v = 1 + u * 2^-8) the rounding would be biased down by
// up to 2^-8, which this bound rejects (checked below).
TEST(ActivationQuantReference, StochasticRoundUpProbabilityIsTheFraction) {
  const uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const double bound = std::ldexp(1.0, -9) + std::ldexp(1.0, -16);
  double worst_plain = 0;
  for (float qmax : {15.0f, 255.0f}) {
    std::uniform_real_distribution<float> pos(0.0f, qmax);
    for (int i = 0; i < 4000; ++i) {
      const float t = i == 0 ? qmax : pos(rng);
      const double fl = std::floor(static_cast<double>(t));
      const double frac = static_cast<double>(t) - fl;
      int ups = 0, plain_ups = 0;
      for (uint32_t u = 0; u < 256; ++u) {
        ups += aq::unbiased_code(aq::stochastic_biased(t, aq::dither_bits(u, 0))) > fl;
        const float v_plain = aq::bits_float(0x3F800000u | (u << 15));  // 1 + u * 2^-8
        plain_ups += std::floor(static_cast<double>(t + v_plain)) - 1 > fl;
      }
      ASSERT_LE(std::fabs(ups / 256.0 - frac), bound) << "t " << t;
      worst_plain = std::max(worst_plain, std::fabs(plain_ups / 256.0 - frac));
    }
  }
  EXPECT_GT(worst_plain, bound) << "an uncentred dither is outside the bound: the test can tell";
}

// The nearest code is computed as t + 1.5 * 2^23 in fp32: that must be
// round-half-even of t for every t the format produces (0 <= t <= 255).
TEST(ActivationQuantReference, MagicAddIsRoundHalfEven) {
  std::mt19937 rng(fresh_seed());
  std::uniform_real_distribution<float> u(0.0f, 255.0f);
  for (int i = 0; i < 200000; ++i) {
    const float t = i < 511 ? 0.5f * static_cast<float>(i) : u(rng);  // every half-integer tie, then random
    ASSERT_EQ(aq::unbiased_code(aq::nearest_biased(t)), static_cast<uint32_t>(std::nearbyint(t))) << t;
  }
  EXPECT_EQ(aq::unbiased_code(aq::nearest_biased(2.5f)), 2u);
  EXPECT_EQ(aq::unbiased_code(aq::nearest_biased(3.5f)), 4u);
  EXPECT_EQ(aq::unbiased_code(aq::nearest_biased(std::nextafter(2.5f, 3.0f))), 3u);
}

// floor(fl(t + v)) - 1 with v in [1, 2): the code is floor(t) or floor(t) + 1,
// never above qmax (no clamp: v <= 2 - 2^-9), and u = 0 / 255 give the extremes.
TEST(ActivationQuantReference, StochasticCodeStaysInItsCell) {
  std::mt19937 rng(fresh_seed());
  for (uint32_t qmax : {15u, 255u}) {
    std::uniform_real_distribution<float> u(0.0f, static_cast<float>(qmax));
    for (int i = 0; i < 100000; ++i) {
      const float t = i < 2 ? std::nextafter(static_cast<float>(qmax), i == 0 ? 1e9f : 0.0f) : u(rng);
      const float tc = std::min(t, static_cast<float>(qmax));  // grid_position clamps
      const uint32_t vb = aq::dither_bits(rng(), static_cast<int>(rng() & 3));
      const uint32_t c = aq::unbiased_code(aq::stochastic_biased(tc, vb));
      const auto fl = static_cast<uint32_t>(std::floor(tc));
      ASSERT_TRUE(c == fl || c == fl + 1) << tc << " -> " << c;
      ASSERT_LE(c, qmax);
    }
    for (uint32_t v = 0; v < 256; ++v)
      ASSERT_EQ(aq::unbiased_code(aq::stochastic_biased(static_cast<float>(qmax), aq::dither_bits(v, 0))), qmax);
  }
  EXPECT_EQ(aq::unbiased_code(aq::stochastic_biased(3.25f, aq::dither_bits(0, 0))), 3u);
  EXPECT_EQ(aq::unbiased_code(aq::stochastic_biased(3.25f, aq::dither_bits(0xFF, 0))), 4u);
  EXPECT_EQ(aq::unbiased_code(aq::stochastic_biased(0.0f, aq::dither_bits(0, 0))), 0u);
  // byte k of the hash lands in the same place for every k
  for (int k = 0; k < 4; ++k) EXPECT_EQ(aq::dither_bits(0xA5u << (8 * k), k), aq::kDitherOne | (0xA5u << 15));
}

TEST(ActivationQuantReference, DirectedBf16Rounding) {
  EXPECT_EQ(aq::bf16_bits_value(aq::bf16_round_down(1.0f + 0x1p-10f)), 1.0f);
  EXPECT_EQ(aq::bf16_bits_value(aq::bf16_round_up_nonneg(1.0f + 0x1p-10f)), 1.0078125f);
  EXPECT_EQ(aq::bf16_bits_value(aq::bf16_round_down(-1.0f - 0x1p-10f)), -1.0078125f);
  EXPECT_EQ(aq::bf16_bits_value(aq::bf16_round_down(-1.0f)), -1.0f);
  EXPECT_EQ(aq::bf16_bits_value(aq::bf16_round_up_nonneg(0.0f)), 0.0f);
  EXPECT_TRUE(std::isinf(aq::bf16_bits_value(aq::bf16_round_up_nonneg(3.4e38f))));
  EXPECT_TRUE(std::isnan(aq::bf16_bits_value(aq::bf16_round_down(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(ActivationQuantReference, RejectsBadOptions) {
  const std::vector<float> x(100, 1.0f);
  auto message = [&](int bits, int block) {
    try {
      quantize_reference(x, {bits, block, false, 0});
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(3, 64).find("bits must be 4 or 8, got 3"), std::string::npos);
  EXPECT_NE(message(16, 64).find("bits"), std::string::npos);
  EXPECT_NE(message(4, 32).find("block must be 64 or 128, got 32"), std::string::npos);
  ActQuantized q = quantize_reference(x, {4, 64, false, 0});
  q.codes.pop_back();
  EXPECT_THROW(dequantize_reference(q), std::invalid_argument);
  q = quantize_reference(x, {4, 64, false, 0});
  q.scale.push_back(0);
  EXPECT_THROW(dequantize_reference(q), std::invalid_argument);
  EXPECT_TRUE(quantize_reference(std::span<const float>(), {4, 64, false, 0}).codes.empty());
}

}  // namespace
}  // namespace stepscope::kernels
