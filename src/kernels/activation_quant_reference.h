// CPU reference of block-wise activation compression (issue #6 item 2): the
// oracle the CUDA kernels (gpu/activation_quant.cu) are tested against. The
// format is defined in activation_quant_format.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace stepscope::kernels {

struct ActQuantOptions {
  int bits = 4;             // 4 or 8
  int block = 64;           // 64 or 128 elements per scale/zero pair
  bool stochastic = false;  // stochastic rounding instead of round-half-even
  uint64_t seed = 0;        // stochastic rounding: same seed, same codes
};

// The quantized form of n values: codes (4-bit packed two per byte, the even
// element in the low nibble), and per block bf16 bit patterns of the scale
// and of the zero point (the rounded-down block minimum).
struct ActQuantized {
  std::vector<uint8_t> codes;
  std::vector<uint16_t> scale;
  std::vector<uint16_t> zero;
  size_t numel = 0;
  int bits = 4;
  int block = 64;
};

// Throws std::invalid_argument naming the option when bits/block are not
// supported (bits 4 or 8, block 64 or 128).
void check_act_quant_options(int bits, int block);

size_t act_quant_code_bytes(size_t numel, int bits);   // ceil(numel * bits / 8)
size_t act_quant_num_blocks(size_t numel, int block);  // ceil(numel / block)

// x holds the input values exactly (bf16/fp16 inputs widened to float).
ActQuantized quantize_reference(std::span<const float> x, const ActQuantOptions& opt);

// Values in fp32 (fma(code, scale, zero)); the caller rounds them to the
// original dtype. Throws std::invalid_argument on inconsistent sizes.
std::vector<float> dequantize_reference(const ActQuantized& q);

// Code of element i (unpacks 4-bit codes); i < q.numel.
uint32_t act_quant_code_at(const ActQuantized& q, size_t i);

}  // namespace stepscope::kernels
