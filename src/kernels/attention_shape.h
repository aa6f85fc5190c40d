// The shape of an attention call, shared by the CPU reference and the CUDA
// kernels (kept free of C++20 headers: nvcc compiles the kernels as C++17).
// q [batch, heads, seq_q, head_dim]; k, v [batch, kv_heads, seq_k, head_dim];
// heads a multiple of kv_heads (grouped-query attention).
#pragma once

#include <cstdint>

namespace stepscope::kernels {

struct AttentionShape {
  int64_t batch = 1, heads = 1, kv_heads = 1, seq_q = 0, seq_k = 0, head_dim = 0;
};

}  // namespace stepscope::kernels
