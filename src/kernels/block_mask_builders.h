// The common block-sparse attention patterns as BlockMasks (issue #29 item 1).
//
// Token-level patterns (causal, sliding window, documents, global tokens)
// are built from their ElementRule exactly: a block is live when some pair
// of tokens in it is allowed and attended whole when every pair is, so the
// kernel masks only the partial blocks. Block-level patterns (strided,
// dilated, BigBird's random blocks, arbitrary layouts) are defined on block
// indices; under causal their diagonal blocks are partial. All build one
// mask shared by every batch and head (groups = 1) over seq_q = seq_k = seq.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/block_mask.h"

namespace stepscope::kernels {

// Any token rule; the ones below are shorthands.
BlockMask mask_from_rule(int64_t seq, int block, ElementRule rule);

BlockMask causal_mask(int64_t seq, int block);
// Each query sees the `window` keys up to and including itself (causal) or
// within `window` positions either side.
BlockMask sliding_window_mask(int64_t seq, int block, int64_t window, bool causal);
// Packed sequences: documents of the given lengths back to back, attention
// inside each document only (plus causal).
BlockMask document_mask(std::span<const int64_t> doc_lengths, int block, bool causal);
// Longformer-style: `global_tokens` leading tokens attend and are attended
// everywhere, the others see a sliding window.
BlockMask global_window_mask(int64_t seq, int block, int64_t global_tokens, int64_t window, bool causal);
// Sparse Transformer's strided pattern (Child et al. 2019) on blocks: each
// query block sees the `local_blocks` blocks ending at itself and every
// block whose index + 1 is a multiple of `stride_blocks` ("summary" columns).
BlockMask strided_mask(int64_t seq, int block, int local_blocks, int stride_blocks, bool causal);
// Dilated sliding window on blocks: the `window_blocks` blocks at distances
// 0, dilation, 2·dilation, ... (backwards under causal, both ways otherwise).
BlockMask dilated_mask(int64_t seq, int block, int window_blocks, int dilation, bool causal);
// BigBird (Zaheer et al. 2020), not causal: `global_blocks` leading blocks
// attend and are attended everywhere, a window of `window_blocks` centred on
// the diagonal, and `random_blocks` further blocks per row drawn with `seed`.
BlockMask bigbird_mask(int64_t seq, int block, int global_blocks, int window_blocks, int random_blocks, uint64_t seed);

// A mask chosen from the input (issue #29 item 4), one per batch × head
// (groups = batch · heads). Each block of q and k is mean-pooled over its
// tokens; a query block keeps its `window_blocks` nearest key blocks (ending
// at itself under causal, centred otherwise), the `global_blocks` leading
// ones, and the `topk` other key blocks with the largest pooled score q̄·k̄
// (ties to the lower index; under causal only blocks at or before it).
// Layouts as block_sparse_attention_reference.h: q [batch, heads, seq,
// head_dim], k [batch, kv_heads, seq, head_dim]. Under causal the diagonal
// block is partial with a causal rule. This is the CPU reference of the GPU
// selection.
BlockMask topk_pooled_mask(std::span<const float> q, std::span<const float> k, int64_t batch, int64_t heads,
                           int64_t kv_heads, int64_t seq, int64_t head_dim, int block, int topk, int window_blocks,
                           int global_blocks, bool causal);

}  // namespace stepscope::kernels
