// IEEE half (fp16) <-> float conversions for the CPU references, on raw 16-bit
// patterns like bf16.h. Narrowing rounds to nearest, ties to even, with
// subnormals and overflow to infinity handled as __float2half_rn and torch's
// .to(torch.float16) do, so a reference and a kernel agree bit for bit.
#pragma once

#include <cstdint>
#include <cstring>

namespace stepscope::kernels {

inline float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t man = h & 0x3FFu;
  uint32_t u;
  if (exp == 0x1F) {
    u = sign | 0x7F800000u | (man << 13);  // inf or NaN (payload kept)
  } else if (exp != 0) {
    u = sign | ((exp + 112u) << 23) | (man << 13);  // 112 = 127 - 15
  } else if (man == 0) {
    u = sign;
  } else {
    // Subnormal half: man * 2^-24, exact in float.
    float f = static_cast<float>(man) * 5.9604644775390625e-8f;
    std::memcpy(&u, &f, sizeof u);
    u |= sign;
  }
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline uint16_t float_to_fp16_rne(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) {  // inf or NaN: a NaN stays a quiet NaN
    return static_cast<uint16_t>(sign | (abs > 0x7F800000u ? 0x7E00u : 0x7C00u));
  }
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds to >= 65520: overflow
  if (abs < 0x38800000u) {
    // Result is a half subnormal (or zero): value / 2^-24 rounded to an
    // integer, ties to even. Below 2^-25 everything rounds to zero.
    if (abs < 0x33000000u) return sign;
    const uint32_t exp = abs >> 23;
    const uint32_t man = (abs & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126u - exp;  // bits dropped: value = man * 2^(exp-150), want units of 2^-24
    uint32_t q = man >> shift;
    const uint32_t rem = man & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  // Normal: rebias the exponent, round the 13 dropped mantissa bits (a carry
  // into the exponent is the correct rounding up to the next binade).
  const uint32_t rebased = abs - (112u << 23);
  const uint32_t bias = 0xFFFu + ((rebased >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rebased + bias) >> 13));
}

}  // namespace stepscope::kernels
