// CUDA kernels of the fused QKV split + RoPE (issue #6 item 1), raw-pointer
// API free of torch: linked into stepscope_kernels_gpu (tests) and compiled
// into the torch extension (python/stepscope_kernels). Semantics and layout
// are those of kernels/qkv_rope_reference.h, which the kernels match bit for bit.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "kernels/qkv_rope_dims.h"

namespace stepscope::kernels::gpu {

enum class RopeDType : int { kFloat32 = 0, kFloat16 = 1, kBFloat16 = 2 };

// All pointers are device memory, contiguous in the reference layout; cos and
// sin are fp32 [d.table_len][d.head_dim / 2]. Returns "" when the kernel was
// launched (or there was nothing to do), otherwise why not: invalid dims (the
// sentence of check_qkv_rope_dims), a null pointer, or the CUDA launch error.
// Pointers need only element alignment; 16-byte vectors are used when every
// pointer and the head_dim allow them.
std::string qkv_rope_forward(const void* qkv, const float* cos, const float* sin, const QkvRopeDims& d,
                             RopeDType dtype, void* q, void* k, void* v, cudaStream_t stream);

std::string qkv_rope_backward(const void* grad_q, const void* grad_k, const void* grad_v, const float* cos,
                              const float* sin, const QkvRopeDims& d, RopeDType dtype, void* grad_qkv,
                              cudaStream_t stream);

// Elements per vector access the kernels would use for these pointers
// (1, 2, 4 or 8); exposed so tests can prove both the vector and scalar paths ran.
int qkv_rope_vector_width(const QkvRopeDims& d, RopeDType dtype, const void* const* ptrs, int n_ptrs,
                          const float* cos, const float* sin);

}  // namespace stepscope::kernels::gpu
