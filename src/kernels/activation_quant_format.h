// The block format of activation compression and the scalar arithmetic that
// defines it. Shared by the CPU reference (activation_quant_reference.cpp) and
// the CUDA kernels (gpu/activation_quant.cu) so that both produce the same
// codes bit for bit; the pure-torch reference in
// python/stepscope_kernels/stepscope_kernels/activation_compression.py mirrors it.
//
// Format (x flattened, cut into blocks of `block` elements, the last one may
// be shorter):
//   zero[b]  = bf16 rounded DOWN from min(block)        (so zero <= every x)
//   scale[b] = bf16 rounded UP from (max - zero) / qmax  (so codes stay <= qmax),
//              at least 2^-126 when nonzero (its reciprocal stays finite);
//              0 when max == zero (a constant bf16 block: dequantizes exactly)
//   code     = round((x - zero) * (1 / scale)), clamped to [0, qmax]; nearest is
//              round-half-even, stochastic is floor(t) + (u < t - floor(t)) with
//              u from the counter hash below
//   x'       = fma(code, scale, zero) in fp32, then rounded to the output dtype
// A block holding a NaN/inf, or whose range overflows fp32, is poisoned:
// zero and scale are NaN, codes 0, and it dequantizes to NaN.
// Codes: 8-bit one per byte; 4-bit two per byte, the even element in the low nibble.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define SS_AQ_HD __host__ __device__ __forceinline__
#else
#define SS_AQ_HD inline
#endif

namespace stepscope::kernels::aq {

inline constexpr uint16_t kPoisonBf16 = 0x7FC0;  // quiet NaN
inline constexpr float kMinScale = 1.17549435e-38f;  // 2^-126, exact in bf16 (0x0080)

SS_AQ_HD uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

SS_AQ_HD float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// bf16 value of a bf16 bit pattern (exact).
SS_AQ_HD float bf16_bits_value(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

// Largest bf16 <= f (f finite or inf; NaN stays NaN). Dropping the low half of
// the pattern moves toward zero: right for f >= 0, one bf16 step short for f < 0.
SS_AQ_HD uint16_t bf16_round_down(float f) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return kPoisonBf16;
  uint32_t t = u & 0xFFFF0000u;
  if ((u & 0x80000000u) && (u & 0xFFFFu)) t += 0x10000u;
  return static_cast<uint16_t>(t >> 16);
}

// Smallest bf16 >= f, for f >= 0 (scales are never negative).
SS_AQ_HD uint16_t bf16_round_up_nonneg(float f) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return kPoisonBf16;
  uint32_t t = u & 0xFFFF0000u;
  if (u & 0xFFFFu) t += 0x10000u;
  return static_cast<uint16_t>(t >> 16);
}

SS_AQ_HD bool is_finite(float f) { return (float_bits(f) & 0x7F800000u) != 0x7F800000u; }

// Per-block parameters from the block's min and max (both finite) and qmax
// (15 or 255). Returns false when the block must be poisoned. The explicit
// _rn intrinsics keep nvcc from contracting or approximating: the GPU and the
// CPU must round identically.
struct BlockParams {
  uint16_t zero_bits, scale_bits;
  float zero, inv_scale;
};

SS_AQ_HD bool block_params(float mn, float mx, float qmax, BlockParams* p) {
#if defined(__CUDA_ARCH__)
  mn = __fadd_rn(mn, 0.0f);  // -0 -> +0: min of {0, -0} is either, the stored pattern must not be
  const uint16_t zb = bf16_round_down(mn);
  const float zero = bf16_bits_value(zb);
  const float range = __fsub_rn(mx, zero);
  if (!is_finite(range)) return false;
  uint16_t sb = bf16_round_up_nonneg(__fdiv_rn(range, qmax));
  float scale = bf16_bits_value(sb);
  if (scale > 0.0f && scale < kMinScale) sb = 0x0080, scale = kMinScale;
  if (!is_finite(scale)) return false;
  p->inv_scale = scale > 0.0f ? __fdiv_rn(1.0f, scale) : 0.0f;
#else
  mn = mn + 0.0f;
  const uint16_t zb = bf16_round_down(mn);
  const float zero = bf16_bits_value(zb);
  const float range = mx - zero;
  if (!is_finite(range)) return false;
  uint16_t sb = bf16_round_up_nonneg(range / qmax);
  float scale = bf16_bits_value(sb);
  if (scale > 0.0f && scale < kMinScale) sb = 0x0080, scale = kMinScale;
  if (!is_finite(scale)) return false;
  p->inv_scale = scale > 0.0f ? 1.0f / scale : 0.0f;
#endif
  p->zero_bits = zb;
  p->scale_bits = sb;
  p->zero = zero;
  return true;
}

// Position of x within the block's grid, in code units (>= 0 since zero <= x).
SS_AQ_HD float grid_position(float x, const BlockParams& p, float qmax) {
#if defined(__CUDA_ARCH__)
  const float t = __fmul_rn(__fsub_rn(x, p.zero), p.inv_scale);
#else
  const float t = (x - p.zero) * p.inv_scale;
#endif
  return t < qmax ? t : qmax;
}

SS_AQ_HD uint32_t round_nearest(float t) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint32_t>(__float2int_rn(t));
#else
  return static_cast<uint32_t>(std::nearbyint(t));  // default rounding mode: half to even
#endif
}

// splitmix64 finaliser: turns the user's seed into the two hash keys.
SS_AQ_HD uint64_t mix_seed(uint64_t seed) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// 24 uniform bits for element `index` under the mixed seed `key`: a bijection
// of the low 32 index bits (multiply-add, then murmur3's fmix32), so within
// 2^32 elements no two draw the same word.
SS_AQ_HD uint32_t uniform24(uint64_t key, uint64_t index) {
  uint32_t h = static_cast<uint32_t>(index) * 0x9E3779B9u + static_cast<uint32_t>(key);
  h ^= static_cast<uint32_t>(index >> 32) * 0x85EBCA6Bu + static_cast<uint32_t>(key >> 32);
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h >> 8;
}

// Stochastic rounding: floor(t) + 1 with probability frac(t) (to 2^-24).
SS_AQ_HD uint32_t round_stochastic(float t, uint32_t u24, float qmax) {
#if defined(__CUDA_ARCH__)
  const float fl = floorf(t);
#else
  const float fl = static_cast<float>(static_cast<uint32_t>(t));  // t >= 0
#endif
  const float frac = t - fl;  // exact: fl and t share the exponent range
  uint32_t c = static_cast<uint32_t>(fl) + (static_cast<float>(u24) < frac * 16777216.0f ? 1u : 0u);
  return c > static_cast<uint32_t>(qmax) ? static_cast<uint32_t>(qmax) : c;
}

// Dequantized value in fp32: one rounding (fma) on both sides.
SS_AQ_HD float dequant_value(uint32_t code, float scale, float zero) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(static_cast<float>(code), scale, zero);
#else
  return std::fma(static_cast<float>(code), scale, zero);
#endif
}

}  // namespace stepscope::kernels::aq
