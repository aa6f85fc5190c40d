// CPU reference of the fused QKV split + rotary embedding (issue #6 item 1):
// the oracle gpu/qkv_rope.cu is tested against, bit for bit.
//
// Layout: qkv is the output of one GEMM with the weight [Wq; Wk; Wv], shape
// [batch, seq, (heads + 2 * kv_heads) * head_dim], heads in that order. The
// outputs are q [batch, heads, seq, head_dim], k and v [batch, kv_heads, seq,
// head_dim] (the layout scaled_dot_product_attention takes). RoPE is the
// rotate-half convention (GPT-NeoX, Llama in Hugging Face) on q and k; with
// h = head_dim / 2, x = in[i], y = in[i + h], c = cos[s][i], n = sin[s][i]:
//   out[i]     = fma(x, c, -(y * n))      out[i + h] = fma(y, c, x * n)
// and the backward pass applies the transposed rotation to the gradients:
//   grad[i]    = fma(gx, c, gy * n)       grad[i + h] = fma(gy, c, -(gx * n))
// computed in fp32 and rounded once to the output dtype. The exact fma form is
// part of the definition so the GPU kernel can be checked for equality, not
// just closeness.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/qkv_rope_dims.h"

namespace stepscope::kernels {

// cos/sin tables [max_len][head_dim / 2] in fp32: angle(s, i) = s * base^(-2i/head_dim),
// evaluated in double and rounded once to float (more accurate than the usual
// fp32 outer product, whose angle error grows with s).
struct RopeTables {
  std::vector<float> cos;
  std::vector<float> sin;
};
RopeTables rope_tables_reference(int64_t max_len, int64_t head_dim, double base);

// fp32 tensors. Throws std::invalid_argument when dims are invalid or a span
// has the wrong size.
void qkv_rope_forward_reference(std::span<const float> qkv, std::span<const float> cos, std::span<const float> sin,
                                const QkvRopeDims& d, std::span<float> q, std::span<float> k, std::span<float> v);
void qkv_rope_backward_reference(std::span<const float> grad_q, std::span<const float> grad_k,
                                 std::span<const float> grad_v, std::span<const float> cos,
                                 std::span<const float> sin, const QkvRopeDims& d, std::span<float> grad_qkv);

// 16-bit tensors as bit patterns: bf16 when bf16 is true, IEEE half otherwise.
void qkv_rope_forward_reference_16(bool bf16, std::span<const uint16_t> qkv, std::span<const float> cos,
                                   std::span<const float> sin, const QkvRopeDims& d, std::span<uint16_t> q,
                                   std::span<uint16_t> k, std::span<uint16_t> v);
void qkv_rope_backward_reference_16(bool bf16, std::span<const uint16_t> grad_q, std::span<const uint16_t> grad_k,
                                    std::span<const uint16_t> grad_v, std::span<const float> cos,
                                    std::span<const float> sin, const QkvRopeDims& d, std::span<uint16_t> grad_qkv);

}  // namespace stepscope::kernels
