// Block-sparse attention masks (issue #29 item 1): which key blocks each
// query block attends, in CSR form, plus the token-level rule that decides
// the pairs inside blocks that are only partly live.
//
// A mask covers seq_q query and seq_k key tokens cut into blocks of `block`
// tokens (the last block of each may be shorter). Row r = group · q_blocks +
// query block holds the ascending key-block indices col_indices[row_offsets[r]
// .. row_offsets[r + 1]); `partial` marks, per live block, whether the
// element rule must be applied inside it (a live block that is not partial
// is attended whole). Groups: 1 (one mask for every batch and head), heads
// (one per head, shared over the batch) or batch × heads.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace stepscope::kernels {

// Which (query i, key j) token pairs attend, inside partial blocks:
//   base  = (!causal || j <= i) && (window == 0 || distance < window) && same document
//   allowed = base || (global && (!causal || j <= i))
// distance = i - j under causal, |i - j| otherwise; same document = doc_ids
// empty or doc_ids[i] == doc_ids[j] (query and key positions share one
// sequence when documents are used); global = i < global_tokens || j <
// global_tokens (Longformer/BigBird global tokens attend and are attended
// everywhere; under causal, still only backwards).
struct ElementRule {
  bool causal = false;
  int64_t window = 0;
  int64_t global_tokens = 0;
  std::vector<int32_t> doc_ids;
  bool allows(int64_t i, int64_t j) const;
};

struct BlockMask {
  int64_t seq_q = 0, seq_k = 0;
  int block = 128;
  int groups = 1;
  std::vector<int32_t> row_offsets;  // groups · q_blocks + 1, row_offsets[0] = 0
  std::vector<int32_t> col_indices;  // live key blocks, ascending in each row
  std::vector<uint8_t> partial;      // per live block: 1 = apply `rule` inside
  ElementRule rule;

  int64_t q_blocks() const { return (seq_q + block - 1) / block; }
  int64_t k_blocks() const { return (seq_k + block - 1) / block; }
  int64_t live_blocks() const { return static_cast<int64_t>(col_indices.size()); }
  // Live blocks over all groups' block pairs.
  double density() const;
  // Bytes of the CSR arrays (offsets, indices, partial flags).
  int64_t csr_bytes() const;
  // What a dense mask of the same blocks would take: one byte per block
  // (a boolean block bitmap) and four (an int32 index table, as
  // FlexAttention's BlockMask keeps kv_indices).
  int64_t bitmap_bytes() const;
  int64_t index_table_bytes() const;
};

// Empty when the mask is well formed, else what is wrong, naming the field:
// sizes, a block of 16..256 tokens (a multiple of 16), offsets that start at
// 0 and never fall, indices in range and strictly ascending per row, no
// query block without a live key block, document ids as long as the
// sequence when given, and seq_q == seq_k when the rule is causal, windowed
// or uses documents (positions are compared).
std::string validate_block_mask(const BlockMask& m);

// The same live blocks by key block: row (group, key block) lists the query
// blocks that attend it, ascending, with their partial flags (seq_q and
// seq_k swap; the rule is kept as it is, still read as rule.allows(query,
// key)). What a backward pass over keys (dK, dV) walks.
BlockMask transpose_block_mask(const BlockMask& m);

// Dense view: groups × q_blocks × k_blocks bytes, 0 dead, 1 live whole, 2 partial.
std::vector<uint8_t> to_block_bitmap(const BlockMask& m);
// From such a bitmap (any non-zero is live; 2 = partial). Throws
// std::invalid_argument when the bitmap's size does not match.
BlockMask from_block_bitmap(int64_t seq_q, int64_t seq_k, int block, int groups, std::span<const uint8_t> bitmap,
                            ElementRule rule);

// From FlexAttention's BlockMask tensors (torch.nn.attention.flex_attention):
// kv_num_blocks [groups, q_blocks] and kv_indices [groups, q_blocks,
// k_blocks] list the blocks that need mask_mod (partial); full_kv_num_blocks
// and full_kv_indices (optional: empty spans) the blocks attended whole. The
// first num entries of each row count; the rest of the row is ignored. Throws
// std::invalid_argument naming the tensor when sizes or indices are wrong.
BlockMask from_flex_block_mask(int64_t seq_q, int64_t seq_k, int block, int groups,
                               std::span<const int32_t> kv_num_blocks, std::span<const int32_t> kv_indices,
                               std::span<const int32_t> full_kv_num_blocks, std::span<const int32_t> full_kv_indices,
                               ElementRule rule);

}  // namespace stepscope::kernels
