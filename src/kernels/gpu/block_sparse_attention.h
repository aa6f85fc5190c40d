// CUDA kernels of block-sparse attention (issue #29 item 2), raw-pointer API
// free of torch. Semantics, layouts and the meaning of the mask are those of
// kernels/block_sparse_attention_reference.h; the kernels compute in fp32
// from fp16/bf16 inputs and are tested against that reference.
//
// Versions (llm.c style; the fastest correct one is what the entry points run):
//   v1  one thread per query (forward, dQ) or key (dK, dV) row of a block,
//       K/V (or Q/dO) tiles staged through shared memory in fp32, online
//       softmax, FMA arithmetic: the correctness baseline. Correct on the
//       H200 (torch test, memcheck clean), 1-3% of dense SDPA's TFLOP/s
//       (docs/kernels.md, "Block-sparse attention").
//   v2  forward only: FlashAttention-2's loop on the tensor cores through
//       WMMA 16×16×16 (block_sparse_attention_wmma.cu), a warp per 16 query
//       rows, 64-key tiles, S and the output rows in shared memory. Correct
//       on the H200 but slower than v1 there (0.36-0.75x, unpadded tiles):
//       it runs only when asked for, where its pointers are 16-byte aligned.
//   v3  forward and backward on the tensor cores through mma.sync m16n8k16
//       with the fragments in registers (block_sparse_attention_mma*.cu): a
//       warp per 16 rows, 4 warps per block of threads, 64-row tiles of K/V
//       (forward, dQ) or Q/dO (dK, dV) double-buffered through cp.async and
//       read by ldmatrix; the softmax on the accumulators, P and dS fed back
//       as A operands. Correct on an H100 (torch and C++ tests, memcheck
//       clean), 3.2-63x v1's speed there and 2.3-5.3x v2's forward
//       (2026-12-05, docs/kernels.md).
//   v4  v3 with a mask-free path for tiles the mask keeps whole (no
//       per-element keep test there: Nsight Compute found v3's integer
//       pipeline the busiest), and at head dim 64 a forward held to 128
//       registers for 4 blocks of threads per SM. Correct on the same H100,
//       1.2-1.5x v3's forward at head dim 64 and 1.0-1.1x at 128.
//   v5  v4 with 24% fewer instructions in the forward (Nsight Compute's
//       source view of v4 counted more FMUL than HMMA): the scale folded
//       into the exponent's FFMA, exponents by ex2.approx, whole tiles'
//       scores without a per-column test, tiles walked by a cursor instead
//       of a division, 32-bit staging offsets; the backward shares the
//       exponents, walk and staging. Correct on an H200 (torch and C++
//       tests, memcheck clean); there 1.03-1.50x v4's forward at 16k tokens
//       and head dim 128, 0.74-0.92x at 4k tokens and head dim 64 (137
//       registers: 3 blocks per SM), 0.90-1.24x forward + backward: the
//       default (version 0) where its pointers are 16-byte aligned, v1
//       elsewhere.
//   v6  forward only: v5's loop on Hopper's warpgroup products (wgmma,
//       block_sparse_attention_wgmma.cu; sm_90a): a warpgroup per 64 query
//       rows issues S = Q·Kᵀ as D/16 m64n64k16 reading K from shared memory
//       in wgmma's core-matrix layout, and O += P·V as 4 m64nDk16 reading V
//       there transposed; Q and P stay in registers, the softmax is v5's.
//       Where wgmma does not run (not compute capability 9.0) it is v5.
//   v7  v6 with two warpgroups per block of threads (128 query rows)
//       sharing each staged K/V tile.
//   v8  v7 with FlashAttention-3's overlap inside a warpgroup: tile t+1's
//       S and tile t's P·V issued together, t+1's softmax run while t's
//       P·V runs; K/V staged two tiles ahead in a ring of four buffers; one
//       warpgroup for blocks of 64 rows or fewer.
//   v9  v8 with K staged in wgmma's 128-byte swizzle, each row read whole
//       (Nsight Compute on v8: K/V loads fetched every L2 sector twice).
//   v10 v9 with V in the same swizzle (the MN-major form of P·V's B).
//   v11 v10's tiles copied by the tensor memory accelerator (TMA), issued
//       by one thread and awaited on per-buffer barriers instead of a block
//       barrier per tile; v10 where the tensor maps cannot be made.
//       v6 to v11 run v5's backward.
//   v12 backward: v5's dQ pass, then the dK/dV pass on wgmma
//       (block_sparse_attention_wgmma_bwd.cu): a warpgroup's 64 key rows of
//       K and V copied once into shared memory and read there as wgmma's A,
//       Q/dO tiles copied by TMA into a ring of three; v5's dK/dV where it
//       does not run. The forward is v11's.
//   v13 v12 with the dQ pass on wgmma too (block_sparse_attention_wgmma_dq.cu):
//       the block's Q and dO rows copied once and read as A from shared
//       memory, K/V tiles by TMA, Δ computed at its start; v5's dQ where it
//       does not run.
//   v14 v11's forward with a partial tile's mask tested once per tile into
//       a bit per score (as v13's backward passes do), and in all three
//       kernels the bits made from each row's interval of the other side
//       where the rule has no documents or global tokens
//       (kernels/rule_interval.h); v13's backward otherwise.
//   v15 v14 with its head dim 64 forward held to 128 registers, two
//       blocks of threads per SM (v14: 145, one); v14 at head dim 128.
//       v14 and v15 bit for bit v5's outputs on an H100 (2026-12-06);
//       forward 1.2-2.1x v11, backward 1.0-1.9x v13 (lowest density most).
//   v16 v15 whose dK/dV pass stores dK and dV in the dtype where there is
//       no GQA (a block of threads then holds its key rows' whole sum),
//       instead of atomics into fp32 rows zeroed before and copied after:
//       backward 1.04-1.64x v15's (H100, 2026-12-06; most at 4k tokens).
//   v17 v16 with documents packed whole as intervals too: each token's
//       document run (kernels/document_spans.h, DeviceBlockMask::doc_spans)
//       cuts its window interval, in all three kernels: 1.9-2.5x v15/v16
//       on unaligned documents, the same on windows; outputs and gradients
//       of v14-v17 bit for bit v5's. The default (docs/kernels.md).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "kernels/attention_shape.h"

namespace stepscope::kernels::gpu {

enum class AttnDType : int { kFloat16 = 1, kBFloat16 = 2 };

// A BlockMask's arrays and rule in device memory. `rows`: the mask by query
// block (forward, dQ); `cols`: transpose_block_mask of it (dK, dV). doc_ids
// may be null (no documents).
struct DeviceCsr {
  const int32_t* row_offsets = nullptr;
  const int32_t* col_indices = nullptr;
  const uint8_t* partial = nullptr;
};
struct DeviceBlockMask {
  DeviceCsr rows, cols;
  int groups = 1;
  int block = 128;
  bool causal = false;
  int64_t window = 0;
  int64_t global_tokens = 0;
  const int32_t* doc_ids = nullptr;
  // [seq][2]: each token's document as [first, last] where every document
  // is one run (kernels/document_spans.h); null otherwise. Read from v17.
  const int32_t* doc_spans = nullptr;
};

// Bytes of fp32 workspace the backward needs: dK and dV accumulators
// (GQA heads add into them) and the per-query dO·O terms.
int64_t block_sparse_attention_workspace_bytes(const AttentionShape& s);

// Returns "" when launched, else why not (shape, head_dim other than 64 or
// 128, block other than 16..128 in steps of 16, a null pointer, or the
// launch error). out: like q, in dtype; lse: fp32 [batch, heads, seq_q].
// `version`: 0 the fastest measured (block_sparse_attention.cu,
// kFastestForward; v5 where wgmma does not run), 1 to 17 that one (2 to 5
// fall back to 1 where they do not apply, 6 to 17 to 5; v12's and v13's
// forward is v11's, v16's v15's).
std::string block_sparse_attention_forward(const void* q, const void* k, const void* v, const AttentionShape& s,
                                           const DeviceBlockMask& m, float scale, AttnDType dtype, void* out,
                                           float* lse, cudaStream_t stream, int version = 0);
// dq, dk, dv in dtype; workspace of block_sparse_attention_workspace_bytes.
// `version`: 0 the fastest measured (kFastestBackward),
// 1, 3, 4, 5 or 12 to 17 (6 to 11: 5; 14: 13 with interval masks; 15: 14;
// 12 to 17 are 5 where wgmma does not run, 16 and 17 are 15 with GQA).
std::string block_sparse_attention_backward(const void* q, const void* k, const void* v, const void* out,
                                            const void* dout, const float* lse, const AttentionShape& s,
                                            const DeviceBlockMask& m, float scale, AttnDType dtype, void* dq,
                                            void* dk, void* dv, void* workspace, cudaStream_t stream,
                                            int version = 0);

}  // namespace stepscope::kernels::gpu
