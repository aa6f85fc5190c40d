// bf16 <-> float conversions for the CPU references of the kernels layer.
// The references hold bf16 tensors as their raw 16-bit patterns (uint16_t) so
// they need no compiler bf16 type; the conversions match what the GPU does:
// widening is exact, narrowing rounds to nearest, ties to even (the rounding
// of __float2bfloat16_rn and of torch's .to(torch.bfloat16)).
#pragma once

#include <cstdint>
#include <cstring>

namespace stepscope::kernels {

// Exact: every bf16 is a float with the low 16 mantissa bits zero.
// memcpy rather than std::bit_cast: the header also compiles as C++17 (nvcc).
inline float bf16_to_float(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Round to nearest even. NaN stays a (quiet) NaN with its sign: adding the
// rounding bias to a NaN pattern could carry into the exponent and turn a NaN
// whose payload sits only in the low bits into an infinity.
inline uint16_t float_to_bf16_rne(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu) != 0) {
    return static_cast<uint16_t>((u >> 16) | 0x0040u);
  }
  // Bias 0x7FFF plus the lowest kept bit: halfway cases round to the even one.
  const uint32_t bias = 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>((u + bias) >> 16);
}

// float -> nearest bf16 -> float: the value a bf16 tensor stores for f.
inline float round_to_bf16(float f) { return bf16_to_float(float_to_bf16_rne(f)); }

}  // namespace stepscope::kernels
