// Block masks: the builders' block classification against a brute-force
// check of every token pair, hand-worked small patterns, the dense and
// FlexAttention round trips, the CSR's size, and the malformed masks the
// validator must name.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/block_mask.h"
#include "kernels/block_mask_builders.h"

namespace stepscope::kernels {
namespace {

// For every block pair: whether some in-range token pair is allowed and
// whether all are, straight from the rule.
void expect_exact(const BlockMask& m, bool whole_exact) {
  ASSERT_EQ(validate_block_mask(m), "");
  const std::vector<uint8_t> bitmap = to_block_bitmap(m);
  const int64_t nb = m.q_blocks(), kb = m.k_blocks();
  for (int64_t q = 0; q < nb; ++q)
    for (int64_t k = 0; k < kb; ++k) {
      bool any = false, all = true;
      for (int64_t i = q * m.block; i < std::min(m.seq_q, (q + 1) * m.block); ++i)
        for (int64_t j = k * m.block; j < std::min(m.seq_k, (k + 1) * m.block); ++j) {
          const bool a = m.rule.allows(i, j);
          any = any || a;
          all = all && a;
        }
      const uint8_t c = bitmap[static_cast<size_t>(q * kb + k)];
      SCOPED_TRACE("block (" + std::to_string(q) + ", " + std::to_string(k) + ")");
      EXPECT_EQ(c != 0, any);
      if (c == 1) EXPECT_TRUE(all);
      if (whole_exact && any) EXPECT_EQ(c == 1, all);
    }
}

TEST(BlockMask, CausalBlocksAndRaggedEnd) {
  const BlockMask m = causal_mask(1024, 128);
  EXPECT_EQ(m.q_blocks(), 8);
  EXPECT_EQ(m.live_blocks(), 36);  // 8 · 9 / 2
  int partial = 0;
  for (uint8_t p : m.partial) partial += p;
  EXPECT_EQ(partial, 8);  // the diagonal
  EXPECT_DOUBLE_EQ(m.density(), 36.0 / 64);
  const BlockMask ragged = causal_mask(1000, 128);  // the last block holds 104 tokens
  EXPECT_EQ(ragged.live_blocks(), 36);
  expect_exact(ragged, true);
}

TEST(BlockMask, TokenRulesAreExactAgainstEveryPair) {
  std::mt19937 rng(7);
  for (int block : {16, 32}) {
    for (bool causal : {true, false}) {
      SCOPED_TRACE(std::to_string(block) + (causal ? " causal" : " bidirectional"));
      for (int64_t window : {1, 17, 40, 64}) expect_exact(sliding_window_mask(300, block, window, causal), true);
      std::vector<int64_t> docs;
      std::uniform_int_distribution<int64_t> len(1, 70);
      for (int64_t total = 0; total < 290;) total += docs.emplace_back(len(rng));
      expect_exact(document_mask(docs, block, causal), true);
      ElementRule docs_window;
      docs_window.causal = causal, docs_window.window = 23;
      for (size_t d = 0; d < docs.size(); ++d) docs_window.doc_ids.insert(docs_window.doc_ids.end(), docs[d], d);
      const int64_t seq = static_cast<int64_t>(docs_window.doc_ids.size());
      expect_exact(mask_from_rule(seq, block, docs_window), true);
      // Global tokens: the union of two rules is marked partial where only
      // together they cover a block, so only liveness is exact there.
      for (int64_t global : {1, 16, 37}) expect_exact(global_window_mask(300, block, global, 29, causal), false);
    }
  }
}

// Hand-worked on 4 blocks of 16 tokens (0 dead, 1 whole, 2 partial):
// strided, local 1, stride 2, causal: diagonal + odd columns at or below it;
// dilated, 2 blocks at dilation 2, causal: distances 0 and 2.
TEST(BlockMask, BlockPatternsByHand) {
  EXPECT_EQ(to_block_bitmap(strided_mask(64, 16, 1, 2, true)),
            (std::vector<uint8_t>{2, 0, 0, 0, 0, 2, 0, 0, 0, 1, 2, 0, 0, 1, 0, 2}));
  EXPECT_EQ(to_block_bitmap(dilated_mask(64, 16, 2, 2, true)),
            (std::vector<uint8_t>{2, 0, 0, 0, 0, 2, 0, 0, 1, 0, 2, 0, 0, 1, 0, 2}));
  EXPECT_EQ(to_block_bitmap(dilated_mask(64, 16, 2, 2, false)),
            (std::vector<uint8_t>{1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1}));
}

// BigBird: global rows and columns whole, a window of 3 around the
// diagonal, 2 random blocks per row among the rest; the same seed gives the
// same mask, another seed another one.
TEST(BlockMask, BigBirdRowsCountTheirParts) {
  const BlockMask m = bigbird_mask(64 * 32, 64, 1, 3, 2, 11);
  ASSERT_EQ(validate_block_mask(m), "");
  const int64_t nb = m.q_blocks();
  for (int64_t q = 1; q < nb; ++q) {
    const int32_t n = m.row_offsets[q + 1] - m.row_offsets[q];
    const int64_t window = (q > 1 ? 1 : 0) + 1 + (q + 1 < nb ? 1 : 0);  // block 0 is global, counted apart
    EXPECT_EQ(n, 1 + window + 2) << "row " << q;
  }
  EXPECT_EQ(m.row_offsets[1], nb);  // the global row sees everything
  EXPECT_EQ(to_block_bitmap(m), to_block_bitmap(bigbird_mask(64 * 32, 64, 1, 3, 2, 11)));
  EXPECT_NE(to_block_bitmap(m), to_block_bitmap(bigbird_mask(64 * 32, 64, 1, 3, 2, 12)));
}

TEST(BlockMask, BitmapAndFlexRoundTrips) {
  const BlockMask m = global_window_mask(1000, 64, 70, 200, true);
  const std::vector<uint8_t> bitmap = to_block_bitmap(m);
  const BlockMask back = from_block_bitmap(1000, 1000, 64, 1, bitmap, m.rule);
  EXPECT_EQ(back.row_offsets, m.row_offsets);
  EXPECT_EQ(back.col_indices, m.col_indices);
  EXPECT_EQ(back.partial, m.partial);
  // FlexAttention's layout: partial blocks in kv_*, whole ones in full_kv_*,
  // each row padded to k_blocks entries (the padding is ignored).
  const int64_t nb = m.q_blocks();
  std::vector<int32_t> kv_num(nb), kv_idx(nb * nb, 999), full_num(nb), full_idx(nb * nb, -5);
  for (int64_t r = 0; r < nb; ++r)
    for (int32_t e = m.row_offsets[r]; e < m.row_offsets[r + 1]; ++e) {
      if (m.partial[e]) kv_idx[r * nb + kv_num[r]++] = m.col_indices[e];
      else full_idx[r * nb + full_num[r]++] = m.col_indices[e];
    }
  const BlockMask flex = from_flex_block_mask(1000, 1000, 64, 1, kv_num, kv_idx, full_num, full_idx, m.rule);
  EXPECT_EQ(flex.col_indices, m.col_indices);
  EXPECT_EQ(flex.partial, m.partial);
  // Without full_* every listed block is partial.
  const BlockMask all_partial = from_flex_block_mask(1000, 1000, 64, 1, kv_num, kv_idx, {}, {}, m.rule);
  EXPECT_LT(all_partial.live_blocks(), m.live_blocks());
  kv_idx[0] = static_cast<int32_t>(nb);
  try {
    from_flex_block_mask(1000, 1000, 64, 1, kv_num, kv_idx, full_num, full_idx, m.rule);
    FAIL() << "an out-of-range index was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("kv indices[0][0] = 16 is outside 0..15"), std::string::npos) << e.what();
  }
}

// CSR bytes: 4 per row offset, 4 + 1 per live block. A 64k-token causal
// sliding window of 4096 at block 128: 33 live blocks in a full row of 512.
TEST(BlockMask, CsrSizeAgainstDenseLayouts) {
  const BlockMask m = sliding_window_mask(65536, 128, 4096, true);
  EXPECT_EQ(m.csr_bytes(), 4 * (512 + 1) + 5 * m.live_blocks());
  EXPECT_EQ(m.bitmap_bytes(), 512 * 512);
  EXPECT_EQ(m.index_table_bytes(), 4 * 512 * 512);
  EXPECT_NEAR(m.density(), (33.0 * 512 - 32.0 * 33 / 2) / (512 * 512), 1e-12);
  EXPECT_LT(static_cast<double>(m.csr_bytes()) / m.index_table_bytes(), 0.1);
}

// Input-dependent masks: key block kb's tokens are (kb, 0, 0, 0), head 0's
// queries (1, 0, 0, 0) and head 1's (−1, 0, 0, 0), so head 0 ranks later
// blocks first and head 1 earlier ones; one K/V head serves both. Causal,
// window 1, global 1, top 2 on 8 blocks (and with a short last block, whose
// mean, not sum, is pooled).
TEST(BlockMask, TopkPooledMaskFollowsTheScores) {
  for (int64_t seq : {128, 120}) {
    SCOPED_TRACE(seq);
    const int64_t D = 4;
    std::vector<float> q(2 * seq * D, 0.0f), k(seq * D, 0.0f);
    for (int64_t t = 0; t < seq; ++t) {
      q[t * D] = 1.0f, q[(seq + t) * D] = -1.0f;
      k[t * D] = static_cast<float>(t / 16);
    }
    const BlockMask m = topk_pooled_mask(q, k, 1, 2, 1, seq, D, 16, 2, 1, 1, true);
    ASSERT_EQ(validate_block_mask(m), "");
    ASSERT_EQ(m.groups, 2);
    auto row = [&](int group, int qb) {
      std::vector<int32_t> cols(m.col_indices.begin() + m.row_offsets[group * 8 + qb],
                                m.col_indices.begin() + m.row_offsets[group * 8 + qb + 1]);
      return cols;
    };
    EXPECT_EQ(row(0, 7), (std::vector<int32_t>{0, 5, 6, 7}));
    EXPECT_EQ(row(1, 7), (std::vector<int32_t>{0, 1, 2, 7}));
    EXPECT_EQ(row(0, 2), (std::vector<int32_t>{0, 1, 2}));
    EXPECT_EQ(row(0, 0), (std::vector<int32_t>{0}));
    EXPECT_EQ(to_block_bitmap(m)[7 * 8 + 7], 2);  // the diagonal is partial
    // Both ways, a window of 3 blocks centred on the diagonal.
    const BlockMask both = topk_pooled_mask(q, k, 1, 2, 1, seq, D, 16, 2, 3, 1, false);
    std::vector<int32_t> r0(both.col_indices.begin() + both.row_offsets[3], both.col_indices.begin() + both.row_offsets[4]);
    std::vector<int32_t> r1(both.col_indices.begin() + both.row_offsets[11],
                            both.col_indices.begin() + both.row_offsets[12]);
    EXPECT_EQ(r0, (std::vector<int32_t>{0, 2, 3, 4, 6, 7}));
    EXPECT_EQ(r1, (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  }
  std::vector<float> q(10), k(10);
  EXPECT_THROW(topk_pooled_mask(q, k, 1, 1, 1, 64, 4, 16, 2, 1, 0, true), std::invalid_argument);
}

// The transposed mask holds the same blocks by key: its bitmap is the
// transposed bitmap (per group), and transposing twice gives the mask back.
TEST(BlockMask, TransposeListsQueryBlocksPerKeyBlock) {
  std::vector<uint8_t> bitmap;
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> cell(0, 2);
  const int64_t qb = 5, kb = 7;
  for (int64_t n = 0; n < 2 * qb * kb; ++n) bitmap.push_back(static_cast<uint8_t>(cell(rng)));
  const BlockMask m = from_block_bitmap(5 * 32 - 3, 7 * 32 - 9, 32, 2, bitmap, {});
  const BlockMask t = transpose_block_mask(m);
  EXPECT_EQ(t.seq_q, m.seq_k);
  EXPECT_EQ(t.q_blocks(), kb);
  const std::vector<uint8_t> tb = to_block_bitmap(t);
  for (int64_t g = 0; g < 2; ++g)
    for (int64_t q = 0; q < qb; ++q)
      for (int64_t k = 0; k < kb; ++k)
        EXPECT_EQ(tb[(g * kb + k) * qb + q], bitmap[(g * qb + q) * kb + k]) << g << " " << q << " " << k;
  const BlockMask back = transpose_block_mask(t);
  EXPECT_EQ(back.row_offsets, m.row_offsets);
  EXPECT_EQ(back.col_indices, m.col_indices);
  EXPECT_EQ(back.partial, m.partial);
}

TEST(BlockMask, MalformedMasksAreNamed) {
  BlockMask m = causal_mask(256, 64);
  ASSERT_EQ(validate_block_mask(m), "");
  BlockMask bad = m;
  std::swap(bad.col_indices[1], bad.col_indices[2]);  // row 1 holds {0, 1}
  EXPECT_EQ(validate_block_mask(bad), "col_indices of row 1 are not strictly ascending at entry 2");
  bad = m;
  bad.col_indices.back() = 4;
  EXPECT_EQ(validate_block_mask(bad), "col_indices[9] = 4 is outside 0..3");
  bad = from_block_bitmap(256, 256, 64, 1, std::vector<uint8_t>{1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1}, {});
  EXPECT_EQ(validate_block_mask(bad), "row 1 (query block 1) has no live key block");
  bad = m;
  bad.row_offsets.pop_back();
  EXPECT_EQ(validate_block_mask(bad), "row_offsets has 4 entries, expected groups × query blocks + 1 = 5");
  bad = m;
  bad.block = 100;
  EXPECT_EQ(validate_block_mask(bad), "block (100) must be a multiple of 16 from 16 to 256");
  bad = m;
  bad.seq_k = 300;
  EXPECT_NE(validate_block_mask(bad).find("must equal seq_k"), std::string::npos) << validate_block_mask(bad);
  EXPECT_THROW(sliding_window_mask(256, 64, 0, true), std::invalid_argument);
  EXPECT_THROW(document_mask(std::vector<int64_t>{5, 0}, 64, true), std::invalid_argument);
  EXPECT_THROW(from_block_bitmap(256, 256, 64, 1, std::vector<uint8_t>(15, 1), {}), std::invalid_argument);
}

}  // namespace
}  // namespace stepscope::kernels
