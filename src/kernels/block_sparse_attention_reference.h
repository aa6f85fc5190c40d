// CPU reference of block-sparse attention (issue #29): the oracle the CUDA
// kernels are tested against, and the definition of what they compute.
//
// Layout (what scaled_dot_product_attention takes): q [batch, heads, seq_q,
// head_dim], k and v [batch, kv_heads, seq_k, head_dim] with heads a
// multiple of kv_heads (grouped-query attention: query head h reads key/value
// head h / (heads / kv_heads)); out like q; lse [batch, heads, seq_q], the
// natural-log sum of exp(scale · q·k) over the attended keys. A query attends
// key j when j's block is live in its row of the mask and, where that block
// is partial, the mask's rule allows (i, j); keys past seq_k are never
// attended. A query with no attended key gets out = 0 and lse = −inf.
// Computed in double, returned in float.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/attention_shape.h"
#include "kernels/block_mask.h"

namespace stepscope::kernels {

// Empty when the shape suits the mask (sequence lengths equal, groups 1,
// heads or batch × heads, heads a multiple of kv_heads, positive sizes).
std::string check_attention_shape(const AttentionShape& s, const BlockMask& m);

// Whether query i of (batch b, head h) attends key j.
bool attends(const BlockMask& m, const AttentionShape& s, int64_t b, int64_t h, int64_t i, int64_t j);

// Throw std::invalid_argument naming the argument when a shape, the mask or
// a span's size is wrong.
void block_sparse_attention_forward_reference(const AttentionShape& s, const BlockMask& m, std::span<const float> q,
                                              std::span<const float> k, std::span<const float> v, double scale,
                                              std::span<float> out, std::span<float> lse);
// dq, dk, dv from the forward's out and lse and the gradient of out.
void block_sparse_attention_backward_reference(const AttentionShape& s, const BlockMask& m, std::span<const float> q,
                                               std::span<const float> k, std::span<const float> v,
                                               std::span<const float> out, std::span<const float> dout,
                                               std::span<const float> lse, double scale, std::span<float> dq,
                                               std::span<float> dk, std::span<float> dv);

}  // namespace stepscope::kernels
