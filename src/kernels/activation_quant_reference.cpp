#include "kernels/activation_quant_reference.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/activation_quant_format.h"

namespace stepscope::kernels {

void check_act_quant_options(int bits, int block) {
  if (bits != 4 && bits != 8)
    throw std::invalid_argument("activation quantization: bits must be 4 or 8, got " + std::to_string(bits));
  if (block != 64 && block != 128)
    throw std::invalid_argument("activation quantization: block must be 64 or 128, got " + std::to_string(block));
}

size_t act_quant_code_bytes(size_t numel, int bits) { return bits == 8 ? numel : (numel + 1) / 2; }

size_t act_quant_num_blocks(size_t numel, int block) {
  return (numel + static_cast<size_t>(block) - 1) / static_cast<size_t>(block);
}

ActQuantized quantize_reference(std::span<const float> x, const ActQuantOptions& opt) {
  check_act_quant_options(opt.bits, opt.block);
  ActQuantized q;
  q.numel = x.size();
  q.bits = opt.bits;
  q.block = opt.block;
  const size_t nblocks = act_quant_num_blocks(x.size(), opt.block);
  q.codes.assign(act_quant_code_bytes(x.size(), opt.bits), 0);
  q.scale.assign(nblocks, 0);
  q.zero.assign(nblocks, 0);
  const uint32_t qmax_code = (1u << opt.bits) - 1;
  const float qmax = static_cast<float>(qmax_code);
  const uint64_t key = aq::mix_seed(opt.seed);

  for (size_t b = 0; b < nblocks; ++b) {
    const size_t lo = b * static_cast<size_t>(opt.block);
    const size_t hi = std::min(x.size(), lo + static_cast<size_t>(opt.block));
    bool finite = true;
    float mn = x[lo], mx = x[lo];
    for (size_t i = lo; i < hi; ++i) {
      finite = finite && aq::is_finite(x[i]);
      mn = std::min(mn, x[i]);
      mx = std::max(mx, x[i]);
    }
    aq::BlockParams p{};
    if (!finite || !aq::block_params(mn, mx, aq::inv_qmax(opt.bits), &p)) {
      q.scale[b] = q.zero[b] = aq::kPoisonBf16;
      continue;  // codes stay 0
    }
    q.scale[b] = p.scale_bits;
    q.zero[b] = p.zero_bits;
    for (size_t i = lo; i < hi; ++i) {
      const float t = aq::grid_position(x[i], p, qmax);
      const uint32_t c = aq::unbiased_code(opt.stochastic ? aq::stochastic_biased(t, aq::element_dither_bits(key, i))
                                                          : aq::nearest_biased(t));
      if (opt.bits == 8)
        q.codes[i] = static_cast<uint8_t>(c);
      else
        q.codes[i / 2] |= static_cast<uint8_t>(c << ((i & 1) * 4));
    }
  }
  return q;
}

uint32_t act_quant_code_at(const ActQuantized& q, size_t i) {
  if (q.bits == 8) return q.codes[i];
  return (q.codes[i / 2] >> ((i & 1) * 4)) & 0xFu;
}

std::vector<float> dequantize_reference(const ActQuantized& q) {
  check_act_quant_options(q.bits, q.block);
  const size_t nblocks = act_quant_num_blocks(q.numel, q.block);
  if (q.codes.size() != act_quant_code_bytes(q.numel, q.bits) || q.scale.size() != nblocks ||
      q.zero.size() != nblocks)
    throw std::invalid_argument("activation dequantization: codes/scale/zero sizes (" +
                                std::to_string(q.codes.size()) + "/" + std::to_string(q.scale.size()) + "/" +
                                std::to_string(q.zero.size()) + ") do not match " +
                                std::to_string(q.numel) + " elements");
  std::vector<float> out(q.numel);
  for (size_t i = 0; i < q.numel; ++i) {
    const size_t b = i / static_cast<size_t>(q.block);
    out[i] = aq::dequant_value(act_quant_code_at(q, i), aq::bf16_bits_value(q.scale[b]),
                               aq::bf16_bits_value(q.zero[b]));
  }
  return out;
}

}  // namespace stepscope::kernels
