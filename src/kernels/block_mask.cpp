#include "kernels/block_mask.h"

#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>

namespace stepscope::kernels {

bool ElementRule::allows(int64_t i, int64_t j) const {
  const bool backward = !causal || j <= i;
  if (global_tokens > 0 && (i < global_tokens || j < global_tokens) && backward) return true;
  if (!backward) return false;
  if (window > 0) {
    const int64_t distance = causal ? i - j : (i > j ? i - j : j - i);
    if (distance >= window) return false;
  }
  if (!doc_ids.empty()) return doc_ids[static_cast<size_t>(i)] == doc_ids[static_cast<size_t>(j)];
  return true;
}

double BlockMask::density() const {
  const double pairs = static_cast<double>(groups) * static_cast<double>(q_blocks()) * static_cast<double>(k_blocks());
  return pairs > 0 ? static_cast<double>(live_blocks()) / pairs : 0;
}

int64_t BlockMask::csr_bytes() const {
  return static_cast<int64_t>(row_offsets.size() * sizeof(int32_t) + col_indices.size() * sizeof(int32_t) +
                              partial.size());
}

int64_t BlockMask::bitmap_bytes() const { return static_cast<int64_t>(groups) * q_blocks() * k_blocks(); }

int64_t BlockMask::index_table_bytes() const { return 4 * bitmap_bytes(); }

std::string validate_block_mask(const BlockMask& m) {
  if (m.seq_q < 1 || m.seq_k < 1) return fmt::format("seq_q ({}) and seq_k ({}) must be positive", m.seq_q, m.seq_k);
  if (m.block < 16 || m.block > 256 || m.block % 16 != 0)
    return fmt::format("block ({}) must be a multiple of 16 from 16 to 256", m.block);
  if (m.groups < 1) return fmt::format("groups ({}) must be positive", m.groups);
  const int64_t rows = static_cast<int64_t>(m.groups) * m.q_blocks();
  if (static_cast<int64_t>(m.row_offsets.size()) != rows + 1)
    return fmt::format("row_offsets has {} entries, expected groups × query blocks + 1 = {}", m.row_offsets.size(),
                       rows + 1);
  if (m.row_offsets.front() != 0) return fmt::format("row_offsets[0] is {}, expected 0", m.row_offsets.front());
  if (m.row_offsets.back() != static_cast<int64_t>(m.col_indices.size()))
    return fmt::format("row_offsets ends at {}, but col_indices has {} entries", m.row_offsets.back(),
                       m.col_indices.size());
  if (m.partial.size() != m.col_indices.size())
    return fmt::format("partial has {} entries, col_indices {}", m.partial.size(), m.col_indices.size());
  const int64_t kb = m.k_blocks();
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t begin = m.row_offsets[static_cast<size_t>(r)], end = m.row_offsets[static_cast<size_t>(r) + 1];
    if (end < begin) return fmt::format("row_offsets falls at row {} ({} after {})", r, end, begin);
    if (end == begin) return fmt::format("row {} (query block {}) has no live key block", r, r % m.q_blocks());
    for (int32_t e = begin; e < end; ++e) {
      const int32_t c = m.col_indices[static_cast<size_t>(e)];
      if (c < 0 || c >= kb) return fmt::format("col_indices[{}] = {} is outside 0..{}", e, c, kb - 1);
      if (e > begin && c <= m.col_indices[static_cast<size_t>(e) - 1])
        return fmt::format("col_indices of row {} are not strictly ascending at entry {}", r, e);
    }
  }
  const ElementRule& rule = m.rule;
  if (rule.window < 0 || rule.global_tokens < 0)
    return fmt::format("rule window ({}) and global_tokens ({}) must not be negative", rule.window,
                       rule.global_tokens);
  if (!rule.doc_ids.empty() && static_cast<int64_t>(rule.doc_ids.size()) != m.seq_q)
    return fmt::format("rule doc_ids has {} entries, expected seq_q = {}", rule.doc_ids.size(), m.seq_q);
  if ((rule.causal || rule.window > 0 || !rule.doc_ids.empty()) && m.seq_q != m.seq_k)
    return fmt::format("a causal, windowed or document rule compares positions: seq_q ({}) must equal seq_k ({})",
                       m.seq_q, m.seq_k);
  return "";
}

BlockMask transpose_block_mask(const BlockMask& m) {
  BlockMask t;
  t.seq_q = m.seq_k, t.seq_k = m.seq_q, t.block = m.block, t.groups = m.groups, t.rule = m.rule;
  const int64_t qb = m.q_blocks(), kb = m.k_blocks();
  // Counting sort by (group, key block); scanning rows in order keeps each new row ascending.
  t.row_offsets.assign(static_cast<size_t>(m.groups * kb + 1), 0);
  for (int64_t g = 0; g < m.groups; ++g)
    for (int64_t r = g * qb; r < (g + 1) * qb; ++r)
      for (int32_t e = m.row_offsets[static_cast<size_t>(r)]; e < m.row_offsets[static_cast<size_t>(r) + 1]; ++e)
        ++t.row_offsets[static_cast<size_t>(g * kb + m.col_indices[static_cast<size_t>(e)] + 1)];
  for (size_t n = 1; n < t.row_offsets.size(); ++n) t.row_offsets[n] += t.row_offsets[n - 1];
  t.col_indices.resize(m.col_indices.size());
  t.partial.resize(m.partial.size());
  std::vector<int32_t> next(t.row_offsets.begin(), t.row_offsets.end() - 1);
  for (int64_t g = 0; g < m.groups; ++g)
    for (int64_t q = 0; q < qb; ++q) {
      const int64_t r = g * qb + q;
      for (int32_t e = m.row_offsets[static_cast<size_t>(r)]; e < m.row_offsets[static_cast<size_t>(r) + 1]; ++e) {
        const int32_t at = next[static_cast<size_t>(g * kb + m.col_indices[static_cast<size_t>(e)])]++;
        t.col_indices[static_cast<size_t>(at)] = static_cast<int32_t>(q);
        t.partial[static_cast<size_t>(at)] = m.partial[static_cast<size_t>(e)];
      }
    }
  return t;
}

std::vector<uint8_t> to_block_bitmap(const BlockMask& m) {
  const int64_t qb = m.q_blocks(), kb = m.k_blocks();
  std::vector<uint8_t> bitmap(static_cast<size_t>(m.groups * qb * kb), 0);
  for (int64_t r = 0; r + 1 < static_cast<int64_t>(m.row_offsets.size()); ++r)
    for (int32_t e = m.row_offsets[static_cast<size_t>(r)]; e < m.row_offsets[static_cast<size_t>(r) + 1]; ++e)
      bitmap[static_cast<size_t>(r * kb + m.col_indices[static_cast<size_t>(e)])] =
          m.partial[static_cast<size_t>(e)] ? 2 : 1;
  return bitmap;
}

BlockMask from_block_bitmap(int64_t seq_q, int64_t seq_k, int block, int groups, std::span<const uint8_t> bitmap,
                            ElementRule rule) {
  BlockMask m;
  m.seq_q = seq_q, m.seq_k = seq_k, m.block = block, m.groups = groups, m.rule = std::move(rule);
  if (block < 1 || groups < 1 || seq_q < 1 || seq_k < 1) throw std::invalid_argument("bitmap: sizes must be positive");
  const int64_t qb = m.q_blocks(), kb = m.k_blocks();
  if (static_cast<int64_t>(bitmap.size()) != groups * qb * kb)
    throw std::invalid_argument(fmt::format("bitmap has {} entries, expected groups × query blocks × key blocks = {}",
                                            bitmap.size(), groups * qb * kb));
  m.row_offsets.reserve(static_cast<size_t>(groups * qb + 1));
  m.row_offsets.push_back(0);
  for (int64_t r = 0; r < groups * qb; ++r) {
    for (int64_t c = 0; c < kb; ++c) {
      const uint8_t v = bitmap[static_cast<size_t>(r * kb + c)];
      if (!v) continue;
      m.col_indices.push_back(static_cast<int32_t>(c));
      m.partial.push_back(v == 2 ? 1 : 0);
    }
    m.row_offsets.push_back(static_cast<int32_t>(m.col_indices.size()));
  }
  return m;
}

BlockMask from_flex_block_mask(int64_t seq_q, int64_t seq_k, int block, int groups,
                               std::span<const int32_t> kv_num_blocks, std::span<const int32_t> kv_indices,
                               std::span<const int32_t> full_kv_num_blocks, std::span<const int32_t> full_kv_indices,
                               ElementRule rule) {
  if (block < 1 || groups < 1 || seq_q < 1 || seq_k < 1) throw std::invalid_argument("flex mask: sizes must be positive");
  const int64_t qb = (seq_q + block - 1) / block, kb = (seq_k + block - 1) / block;
  const size_t rows = static_cast<size_t>(groups * qb), table = rows * static_cast<size_t>(kb);
  if (kv_num_blocks.size() != rows)
    throw std::invalid_argument(fmt::format("kv_num_blocks has {} entries, expected {}", kv_num_blocks.size(), rows));
  if (kv_indices.size() != table)
    throw std::invalid_argument(fmt::format("kv_indices has {} entries, expected {}", kv_indices.size(), table));
  const bool has_full = !full_kv_num_blocks.empty() || !full_kv_indices.empty();
  if (has_full && (full_kv_num_blocks.size() != rows || full_kv_indices.size() != table))
    throw std::invalid_argument(fmt::format("full_kv_num_blocks / full_kv_indices have {} / {} entries, expected {} / {}",
                                            full_kv_num_blocks.size(), full_kv_indices.size(), rows, table));
  std::vector<uint8_t> bitmap(table, 0);
  auto mark = [&](const char* what, std::span<const int32_t> num, std::span<const int32_t> idx, uint8_t value) {
    for (size_t r = 0; r < rows; ++r) {
      const int32_t n = num[r];
      if (n < 0 || n > kb) throw std::invalid_argument(fmt::format("{} num_blocks[{}] = {} is outside 0..{}", what, r, n, kb));
      for (int32_t e = 0; e < n; ++e) {
        const int32_t c = idx[r * static_cast<size_t>(kb) + static_cast<size_t>(e)];
        if (c < 0 || c >= kb)
          throw std::invalid_argument(fmt::format("{} indices[{}][{}] = {} is outside 0..{}", what, r, e, c, kb - 1));
        uint8_t& cell = bitmap[r * static_cast<size_t>(kb) + static_cast<size_t>(c)];
        if (cell) throw std::invalid_argument(fmt::format("{} lists key block {} of row {} twice", what, c, r));
        cell = value;
      }
    }
  };
  mark("kv", kv_num_blocks, kv_indices, 2);
  if (has_full) mark("full_kv", full_kv_num_blocks, full_kv_indices, 1);
  return from_block_bitmap(seq_q, seq_k, block, groups, bitmap, std::move(rule));
}

}  // namespace stepscope::kernels
