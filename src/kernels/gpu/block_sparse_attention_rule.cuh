// What the block-sparse attention kernels share: the problem's dimensions
// on the device and the element rule of a partial block (the semantics of
// kernels/block_sparse_attention_reference.h), so every version tests the
// same pairs.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gpu/block_sparse_attention.h"

namespace stepscope::kernels::gpu::bsa {

struct Dims {
  int64_t batch, heads, kv_heads, seq_q, seq_k;
  int64_t q_blocks, k_blocks;
  int groups, block;
  bool causal;
  int64_t window, global_tokens;
  const int32_t* doc_ids;
  // v17: [first, last] of each token's document where documents are packed
  // whole (kernels/document_spans.h), else null: keep_bits then builds a
  // tile's bits from intervals under documents too.
  const int32_t* doc_spans;
};

__device__ __forceinline__ bool allows(const Dims& d, int64_t i, int64_t j) {
  const bool backward = !d.causal || j <= i;
  if (d.global_tokens > 0 && (i < d.global_tokens || j < d.global_tokens) && backward) return true;
  if (!backward) return false;
  if (d.window > 0) {
    const int64_t distance = d.causal ? i - j : (i > j ? i - j : j - i);
    if (distance >= d.window) return false;
  }
  if (d.doc_ids) return d.doc_ids[i] == d.doc_ids[j];
  return true;
}

__device__ __forceinline__ int64_t group_of(const Dims& d, int64_t b, int64_t h) {
  if (d.groups == 1) return 0;
  if (d.groups == d.heads) return h;
  return b * d.heads + h;
}

// Launches version 2 (block_sparse_attention_wmma.cu): tensor-core tiles
// through WMMA. Returns false, launching nothing, where it does not apply
// (a pointer not 16-byte aligned, or too little shared memory).
template <class T, int D>
bool launch_forward_wmma(const void* q, const void* k, const void* v, const Dims& d, const DeviceCsr& rows,
                         float scale, void* out, float* lse, cudaStream_t stream);

// Launches version 3, 4 or 5 (block_sparse_attention_mma.cu): mma.sync with
// the fragments in registers (block_sparse_attention.h lists what each adds).
// Returns false, launching nothing, where it does not apply (a pointer not
// 16-byte aligned, or too little shared memory).
template <class T, int D>
bool launch_forward_mma(const void* q, const void* k, const void* v, const Dims& d, const DeviceCsr& rows,
                        float scale, void* out, float* lse, cudaStream_t stream, int version);

// Launches version 6 or 7 (block_sparse_attention_wgmma.cu): v5's forward
// on Hopper's warpgroup products, one or two warpgroups per block of
// threads. Returns false, launching nothing, where it does not apply (a
// pointer not 16-byte aligned, a device other than compute capability 9.0,
// or too little shared memory).
template <class T, int D>
bool launch_forward_wgmma(const void* q, const void* k, const void* v, const Dims& d, const DeviceCsr& rows,
                          float scale, void* out, float* lse, cudaStream_t stream, int version);

// Where a backward launch left dK and dV: nothing launched, added into the
// fp32 accumulators (zeroed by the launch), or stored in the dtype.
enum class KeyGrads { kNotRun, kAdded, kStored };

// Launches the backward of version 3 on (block_sparse_attention_mma_bwd.cu):
// dQ and Δ by query rows, then dK and dV by key rows, into the fp32
// accumulators or (v16, dk and dv not null, no GQA, on Hopper) into dk and
// dv. Launches nothing where it does not apply.
template <class T, int D>
KeyGrads launch_backward_mma(const void* q, const void* k, const void* v, const void* out, const void* dout,
                             const float* lse, const Dims& d, const DeviceCsr& rows, const DeviceCsr& cols,
                             float scale, void* dq, float* delta, float* dk_acc, float* dv_acc, void* dk, void* dv,
                             cudaStream_t stream, int version);

// Launches v12's dK/dV pass (block_sparse_attention_wgmma_bwd.cu), after
// v5's dQ pass wrote Δ: K and V rows in shared memory as wgmma's A, Q and
// dO copied by TMA. Returns false, launching nothing, where it does not
// apply (a device other than compute capability 9.0, a pointer not 16-byte
// aligned, a tensor map the driver refuses, or too little shared memory).
// `interval`: v14's mask bits (keep_bits by intervals). dk, dv (v16; null
// before): store dK and dV there in the dtype instead of adding into
// dk_acc, dv_acc; refused (false) with GQA or where not 16-byte aligned.
template <class T, int D>
bool launch_backward_dkdv_wgmma(const void* q, const void* k, const void* v, const void* dout, const float* lse,
                                const float* delta, const Dims& d, const DeviceCsr& cols, float scale, float* dk_acc,
                                float* dv_acc, void* dk, void* dv, cudaStream_t stream, bool interval);

// Launches v13's dQ pass (block_sparse_attention_wgmma_dq.cu): dQ and Δ by
// query rows, Q and dO rows in shared memory as wgmma's A, K/V tiles copied
// by TMA. Returns false, launching nothing, where it does not apply (as
// launch_backward_dkdv_wgmma).
template <class T, int D>
bool launch_backward_dq_wgmma(const void* q, const void* k, const void* v, const void* out, const void* dout,
                              const float* lse, const Dims& d, const DeviceCsr& rows, float scale, void* dq,
                              float* delta, cudaStream_t stream, bool interval);

}  // namespace stepscope::kernels::gpu::bsa
