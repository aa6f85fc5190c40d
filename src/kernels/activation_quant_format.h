// The block format of activation compression and the scalar arithmetic that
// defines it. Shared by the CPU reference (activation_quant_reference.cpp) and
// the CUDA kernels (gpu/activation_quant.cu) so that both produce the same
// codes bit for bit; the pure-torch reference in
// python/stepscope_kernels/stepscope_kernels/activation_compression.py mirrors it.
//
// Format (x flattened, cut into blocks of `block` elements, the last one may
// be shorter):
//   zero[b]  = bf16 rounded DOWN from min(block)           (so zero <= every x)
//   scale[b] = bf16 rounded UP from (max - zero) * fl(1/qmax), fl(1/qmax) the
//              fp32 nearest 1/qmax (a multiply, not a division: one
//              instruction per block on the GPU), at least 2^-126 when nonzero
//              (its reciprocal stays finite); 0 when max == zero (a constant
//              bf16 block: dequantizes exactly)
//   t        = min((x - zero) * fl(1/scale), qmax) in fp32, 1/scale correctly
//              rounded (computed once per block)
//   code     = nearest: round-half-even of t, computed as t + 1.5 * 2^23 in
//              fp32 (the sum's rounding IS the rounding to an integer)
//              stochastic: floor(fl(t + v)) - 1 with v = 1 + (u + 1/2) * 2^-8
//              and u 8 uniform bits from the counter hash below (one 32-bit
//              hash per quad of elements, element 4q + k takes byte k);
//              rounds up with probability frac(t) to within 2^-9 + 2^-16,
//              and is never above qmax (t <= qmax, v <= 2 - 2^-9)
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

// fl(1/qmax): the nearest fp32 (the compiler rounds the constant division).
SS_AQ_HD constexpr float inv_qmax(int bits) { return bits == 8 ? 1.0f / 255.0f : 1.0f / 15.0f; }

// Per-block parameters from the block's min and max and qmax (15 or 255), with
// iq = inv_qmax(bits). Returns false when the block must be poisoned: a NaN
// min or max, or a range that is not finite (an infinite element makes it so).
// The explicit _rn intrinsics keep nvcc from contracting or approximating:
// the GPU and the CPU must round identically.
struct BlockParams {
  uint16_t zero_bits, scale_bits;
  float zero, inv_scale;
};

SS_AQ_HD bool block_params(float mn, float mx, float iq, BlockParams* p) {
#if defined(__CUDA_ARCH__)
  // -0 -> +0: min/max of {0, -0} may be either, the stored patterns must not be
  mn = __fadd_rn(mn, 0.0f);
  mx = __fadd_rn(mx, 0.0f);
  const uint16_t zb = bf16_round_down(mn);
  const float zero = bf16_bits_value(zb);
  const float range = __fsub_rn(mx, zero);
  if (!is_finite(range)) return false;
  uint16_t sb = bf16_round_up_nonneg(__fmul_rn(range, iq));
  float scale = bf16_bits_value(sb);
  if (scale > 0.0f && scale < kMinScale) sb = 0x0080, scale = kMinScale;
  if (!is_finite(scale)) return false;
  p->inv_scale = scale > 0.0f ? __frcp_rn(scale) : 0.0f;
#else
  mn = mn + 0.0f;
  mx = mx + 0.0f;
  const uint16_t zb = bf16_round_down(mn);
  const float zero = bf16_bits_value(zb);
  const float range = mx - zero;
  if (!is_finite(range)) return false;
  uint16_t sb = bf16_round_up_nonneg(range * iq);
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

// Codes come out biased by kRoundBias (the bit pattern of 1.5 * 2^23): adding
// that constant to a t in [0, 2^22) leaves round(t) in the low mantissa bits,
// so the rounding is one fp32 add instead of a float-to-int conversion (a
// quarter-rate instruction on the GPU). code = biased - kRoundBias; the low
// byte of `biased` is the code itself.
inline constexpr float kRoundMagic = 12582912.0f;  // 1.5 * 2^23
inline constexpr uint32_t kRoundBias = 0x4B400000u;

// Round half to even: the fp32 add rounds to the integer grid of [2^23, 2^24).
SS_AQ_HD uint32_t nearest_biased(float t) {
#if defined(__CUDA_ARCH__)
  return float_bits(__fadd_rn(t, kRoundMagic));
#else
  return float_bits(t + kRoundMagic);
#endif
}

// The dither of stochastic rounding as fp32 bits: v = 1 + (u + 1/2) * 2^-8
// for the 8 uniform bits u, i.e. u in mantissa bits 22..15 and a 1 in bit 14.
// The half keeps the rounding unbiased to within 2^-9 (a plain u * 2^-8
// would round down too often, by up to 2^-8 of a step).
inline constexpr uint32_t kDitherOne = 0x3F804000u;  // bits of 1 + 2^-9

// v's bits from byte k (0..3) of the 32-bit hash h: the byte moved to bits
// 22..15, then one three-input logic op (mask and or) on the GPU.
SS_AQ_HD uint32_t dither_bits(uint32_t h, int k) {
  const uint32_t moved = k < 2 ? h << (15 - 8 * k) : h >> (8 * k - 15);
  return (moved & 0x7F8000u) | kDitherOne;
}

// Stochastic rounding of t in [0, qmax] with the dither v (bits vb, from
// dither_bits): floor(fl(t + v)) - 1, biased by kRoundBias like
// nearest_biased. No clamp is needed: v <= 2 - 2^-9 and t <= qmax, so
// t + v < qmax + 2 - 2^-9 and its fp32 rounding (half an ulp, at most 2^-16
// below 512) cannot reach qmax + 2.
inline constexpr float kFloorMagic = 12582911.0f;  // 1.5 * 2^23 - 1: the "- 1" folded in
SS_AQ_HD uint32_t stochastic_biased(float t, uint32_t vb) {
  const float v = bits_float(vb);
#if defined(__CUDA_ARCH__)
  // Rounding the add toward -inf onto the integer grid of [2^23, 2^24) is
  // the floor; adding 1.5 * 2^23 - 1 leaves floor(s) - 1 biased by kRoundBias.
  return float_bits(__fadd_rd(__fadd_rn(t, v), kFloorMagic));
#else
  const float s = t + v;  // s >= 1
  return kRoundBias - 1u + static_cast<uint32_t>(std::floor(s));
#endif
}

SS_AQ_HD uint32_t unbiased_code(uint32_t biased) { return biased - kRoundBias; }

// splitmix64 finaliser: turns the user's seed into the two hash keys.
SS_AQ_HD uint64_t mix_seed(uint64_t seed) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// murmur3's 32-bit finaliser.
SS_AQ_HD uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h;
}

// The part of quad_hash that depends on the high word of the quad index (the
// kernels compute it once per thread: a thread's quads share their high word).
SS_AQ_HD uint32_t quad_hash_high(uint64_t key, uint64_t quad) {
  return static_cast<uint32_t>(quad >> 32) * 0x85EBCA6Bu + static_cast<uint32_t>(key >> 32);
}

// 32 uniform bits for the element quad `quad` (= element index / 4) under the
// mixed seed `key`: a bijection of the low 32 quad bits (multiply-add, then
// fmix32), so within 2^34 elements no two quads draw the same word.
SS_AQ_HD uint32_t quad_hash(uint64_t key, uint64_t quad) {
  return fmix32((static_cast<uint32_t>(quad) * 0x9E3779B9u + static_cast<uint32_t>(key)) ^
                quad_hash_high(key, quad));
}

// The 8 uniform bits of element `index`: byte index % 4 of its quad's hash.
SS_AQ_HD uint32_t uniform8(uint64_t key, uint64_t index) {
  return (quad_hash(key, index >> 2) >> ((index & 3) * 8)) & 0xFFu;
}

// The dither bits of element `index` (CPU reference; the kernels take
// dither_bits of one quad_hash for four elements).
SS_AQ_HD uint32_t element_dither_bits(uint64_t key, uint64_t index) {
  return dither_bits(quad_hash(key, index >> 2), static_cast<int>(index & 3));
}

// A code (< 2^23) as fp32, exactly. The GPU builds it from the bit pattern of
// 2^23 + code minus 2^23 (one add instead of a quarter-rate int-to-float
// conversion); the value is the same.
SS_AQ_HD float code_value(uint32_t code) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(bits_float(0x4B000000u | code), 8388608.0f);
#else
  return static_cast<float>(code);
#endif
}

// Dequantized value in fp32: one rounding (fma) on both sides.
SS_AQ_HD float dequant_value(uint32_t code, float scale, float zero) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(code_value(code), scale, zero);
#else
  return std::fma(code_value(code), scale, zero);
#endif
}

}  // namespace stepscope::kernels::aq
