#include "kernels/block_mask_builders.h"

#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

namespace stepscope::kernels {
namespace {

constexpr uint8_t kDead = 0, kWhole = 1, kPartial = 2;

// A run of tokens of one document: [begin, end], inclusive.
struct Run {
  int64_t begin, end;
  int32_t id;
};

std::vector<Run> document_runs(const ElementRule& rule, int64_t seq) {
  std::vector<Run> runs;
  if (rule.doc_ids.empty()) return {{0, seq - 1, 0}};
  for (int64_t i = 0; i < seq; ++i) {
    const int32_t id = rule.doc_ids[static_cast<size_t>(i)];
    if (runs.empty() || runs.back().id != id) runs.push_back({i, i, id});
    else runs.back().end = i;
  }
  return runs;
}

// Queries [a0, a1] against keys [b0, b1] under causal / window alone:
// i − j takes every integer in [a0 − b1, a1 − b0].
uint8_t classify_distance(const ElementRule& r, int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  const int64_t lo = a0 - b1, hi = a1 - b0;
  const int64_t inf = std::numeric_limits<int64_t>::max();
  int64_t min_d = r.causal ? 0 : -inf, max_d = inf;
  if (r.window > 0) {
    max_d = r.window - 1;
    if (!r.causal) min_d = -(r.window - 1);
  }
  if (std::max(lo, min_d) > std::min(hi, max_d)) return kDead;
  return lo >= min_d && hi <= max_d ? kWhole : kPartial;
}

// The rule without its global tokens, over the document runs.
uint8_t classify_base(const ElementRule& r, const std::vector<Run>& runs, int64_t a0, int64_t a1, int64_t b0,
                      int64_t b1) {
  if (r.doc_ids.empty()) return classify_distance(r, a0, a1, b0, b1);
  // Runs are in token order: the ones a range overlaps are consecutive.
  auto overlapping = [&](int64_t lo, int64_t hi) {
    auto first = std::lower_bound(runs.begin(), runs.end(), lo, [](const Run& r, int64_t v) { return r.end < v; });
    auto last = std::upper_bound(first, runs.end(), hi, [](int64_t v, const Run& r) { return v < r.begin; });
    return std::pair{first, last};
  };
  const auto [q_first, q_last] = overlapping(a0, a1);
  const auto [k_first, k_last] = overlapping(b0, b1);
  bool live = false, whole = false;
  for (auto qi = q_first; qi != q_last; ++qi) {
    const Run& q = *qi;
    for (auto ki = k_first; ki != k_last; ++ki) {
      const Run& k = *ki;
      if (k.id != q.id) continue;
      const uint8_t c = classify_distance(r, std::max(q.begin, a0), std::min(q.end, a1), std::max(k.begin, b0),
                                          std::min(k.end, b1));
      if (c != kDead) live = true;
      if (c == kWhole && q.begin <= a0 && q.end >= a1 && k.begin <= b0 && k.end >= b1) whole = true;
    }
  }
  return !live ? kDead : whole ? kWhole : kPartial;
}

uint8_t classify(const ElementRule& r, const std::vector<Run>& runs, int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  const uint8_t base = classify_base(r, runs, a0, a1, b0, b1);
  const int64_t g = r.global_tokens;
  if (g <= 0 || base == kWhole) return base;
  // Global queries (i < g) see every key, global keys (j < g) every query;
  // under causal only j <= i.
  bool live = false;
  if (a0 < g && (!r.causal || b0 <= std::min(a1, g - 1))) live = true;
  if (b0 < g && (!r.causal || a1 >= b0)) live = true;
  const bool whole = (a1 < g || b1 < g) && (!r.causal || b1 <= a0);
  if (whole) return kWhole;
  return live || base != kDead ? kPartial : kDead;
}

void check_sizes(int64_t seq, int block) {
  if (seq < 1) throw std::invalid_argument(fmt::format("seq ({}) must be positive", seq));
  if (block < 16 || block > 256 || block % 16 != 0)
    throw std::invalid_argument(fmt::format("block ({}) must be a multiple of 16 from 16 to 256", block));
}

// A block-level pattern: `live(q, k)` on block indices; under causal, blocks
// above the diagonal are dead and the diagonal ones partial.
template <class Live>
BlockMask from_block_pattern(int64_t seq, int block, bool causal, Live live) {
  check_sizes(seq, block);
  const int64_t nb = (seq + block - 1) / block;
  std::vector<uint8_t> bitmap(static_cast<size_t>(nb * nb), kDead);
  for (int64_t q = 0; q < nb; ++q)
    for (int64_t k = 0; k < nb; ++k) {
      if (causal && k > q) continue;
      if (!live(q, k)) continue;
      bitmap[static_cast<size_t>(q * nb + k)] = causal && k == q ? kPartial : kWhole;
    }
  ElementRule rule;
  rule.causal = causal;
  return from_block_bitmap(seq, seq, block, 1, bitmap, rule);
}

}  // namespace

BlockMask mask_from_rule(int64_t seq, int block, ElementRule rule) {
  check_sizes(seq, block);
  if (!rule.doc_ids.empty() && static_cast<int64_t>(rule.doc_ids.size()) != seq)
    throw std::invalid_argument(fmt::format("doc_ids has {} entries, expected seq = {}", rule.doc_ids.size(), seq));
  if (rule.window < 0 || rule.global_tokens < 0)
    throw std::invalid_argument("window and global_tokens must not be negative");
  const int64_t nb = (seq + block - 1) / block;
  const std::vector<Run> runs = document_runs(rule, seq);
  std::vector<uint8_t> bitmap(static_cast<size_t>(nb * nb), kDead);
  for (int64_t q = 0; q < nb; ++q) {
    const int64_t a0 = q * block, a1 = std::min(seq, a0 + block) - 1;
    for (int64_t k = 0; k < nb; ++k) {
      const int64_t b0 = k * block, b1 = std::min(seq, b0 + block) - 1;
      bitmap[static_cast<size_t>(q * nb + k)] = classify(rule, runs, a0, a1, b0, b1);
    }
  }
  return from_block_bitmap(seq, seq, block, 1, bitmap, std::move(rule));
}

BlockMask causal_mask(int64_t seq, int block) {
  ElementRule r;
  r.causal = true;
  return mask_from_rule(seq, block, r);
}

BlockMask sliding_window_mask(int64_t seq, int block, int64_t window, bool causal) {
  if (window < 1) throw std::invalid_argument(fmt::format("window ({}) must be positive", window));
  ElementRule r;
  r.causal = causal, r.window = window;
  return mask_from_rule(seq, block, r);
}

BlockMask document_mask(std::span<const int64_t> doc_lengths, int block, bool causal) {
  ElementRule r;
  r.causal = causal;
  int64_t seq = 0;
  for (size_t d = 0; d < doc_lengths.size(); ++d) {
    if (doc_lengths[d] < 1) throw std::invalid_argument(fmt::format("document {} has length {}", d, doc_lengths[d]));
    if (doc_lengths[d] > (int64_t{1} << 31) - seq) throw std::invalid_argument("documents longer than 2^31 tokens in all");
    seq += doc_lengths[d];
    r.doc_ids.insert(r.doc_ids.end(), static_cast<size_t>(doc_lengths[d]), static_cast<int32_t>(d));
  }
  if (seq == 0) throw std::invalid_argument("no documents");
  return mask_from_rule(seq, block, std::move(r));
}

BlockMask global_window_mask(int64_t seq, int block, int64_t global_tokens, int64_t window, bool causal) {
  if (window < 1) throw std::invalid_argument(fmt::format("window ({}) must be positive", window));
  ElementRule r;
  r.causal = causal, r.window = window, r.global_tokens = global_tokens;
  return mask_from_rule(seq, block, r);
}

BlockMask strided_mask(int64_t seq, int block, int local_blocks, int stride_blocks, bool causal) {
  if (local_blocks < 1 || stride_blocks < 1)
    throw std::invalid_argument(fmt::format("local_blocks ({}) and stride_blocks ({}) must be positive", local_blocks,
                                            stride_blocks));
  return from_block_pattern(seq, block, causal, [&](int64_t q, int64_t k) {
    const int64_t d = q - k;
    return (d >= 0 ? d : -d) < local_blocks || (k + 1) % stride_blocks == 0;
  });
}

BlockMask dilated_mask(int64_t seq, int block, int window_blocks, int dilation, bool causal) {
  if (window_blocks < 1 || dilation < 1)
    throw std::invalid_argument(fmt::format("window_blocks ({}) and dilation ({}) must be positive", window_blocks,
                                            dilation));
  return from_block_pattern(seq, block, causal, [&](int64_t q, int64_t k) {
    const int64_t d = q >= k ? q - k : k - q;
    return d % dilation == 0 && d / dilation < window_blocks;
  });
}

BlockMask bigbird_mask(int64_t seq, int block, int global_blocks, int window_blocks, int random_blocks,
                       uint64_t seed) {
  check_sizes(seq, block);
  if (global_blocks < 0 || window_blocks < 1 || random_blocks < 0)
    throw std::invalid_argument("global_blocks and random_blocks must not be negative, window_blocks positive");
  const int64_t nb = (seq + block - 1) / block;
  std::vector<uint8_t> bitmap(static_cast<size_t>(nb * nb), kDead);
  std::mt19937_64 rng(seed);
  for (int64_t q = 0; q < nb; ++q) {
    for (int64_t k = 0; k < nb; ++k) {
      const int64_t d = q >= k ? q - k : k - q;
      if (q < global_blocks || k < global_blocks || 2 * d < window_blocks)
        bitmap[static_cast<size_t>(q * nb + k)] = kWhole;
    }
    // Random blocks among the dead ones of this row.
    std::vector<int64_t> dead;
    for (int64_t k = 0; k < nb; ++k)
      if (!bitmap[static_cast<size_t>(q * nb + k)]) dead.push_back(k);
    for (int r = 0; r < random_blocks && !dead.empty(); ++r) {
      std::uniform_int_distribution<size_t> pick(0, dead.size() - 1);
      const size_t at = pick(rng);
      bitmap[static_cast<size_t>(q * nb + dead[at])] = kWhole;
      dead.erase(dead.begin() + static_cast<std::ptrdiff_t>(at));
    }
  }
  return from_block_bitmap(seq, seq, block, 1, bitmap, ElementRule{});
}

BlockMask topk_pooled_mask(std::span<const float> q, std::span<const float> k, int64_t batch, int64_t heads,
                           int64_t kv_heads, int64_t seq, int64_t head_dim, int block, int topk, int window_blocks,
                           int global_blocks, bool causal) {
  check_sizes(seq, block);
  if (batch < 1 || heads < 1 || kv_heads < 1 || head_dim < 1 || heads % kv_heads != 0)
    throw std::invalid_argument(fmt::format("batch ({}), heads ({}), kv_heads ({}), head_dim ({}): positive, heads a "
                                            "multiple of kv_heads",
                                            batch, heads, kv_heads, head_dim));
  if (topk < 0 || window_blocks < 1 || global_blocks < 0)
    throw std::invalid_argument(fmt::format(
        "topk ({}) and global_blocks ({}) must not be negative, window_blocks ({}) must be positive", topk,
        global_blocks, window_blocks));
  if (static_cast<int64_t>(q.size()) != batch * heads * seq * head_dim)
    throw std::invalid_argument(fmt::format("q has {} elements, expected {}", q.size(), batch * heads * seq * head_dim));
  if (static_cast<int64_t>(k.size()) != batch * kv_heads * seq * head_dim)
    throw std::invalid_argument(
        fmt::format("k has {} elements, expected {}", k.size(), batch * kv_heads * seq * head_dim));
  if (batch * heads > std::numeric_limits<int>::max())
    throw std::invalid_argument(fmt::format("batch × heads ({}) is too many mask groups", batch * heads));
  const int64_t nb = (seq + block - 1) / block, D = head_dim;
  // Mean over a block's tokens of rows [base, base + seq) of a [.., seq, D] tensor.
  auto pooled = [&](std::span<const float> x, int64_t base) {
    std::vector<double> out(static_cast<size_t>(nb * D), 0.0);
    for (int64_t t = 0; t < seq; ++t)
      for (int64_t d = 0; d < D; ++d) out[static_cast<size_t>((t / block) * D + d)] += x[static_cast<size_t>((base + t) * D + d)];
    for (int64_t b = 0; b < nb; ++b) {
      const double n = static_cast<double>(std::min(seq, (b + 1) * block) - b * block);
      for (int64_t d = 0; d < D; ++d) out[static_cast<size_t>(b * D + d)] /= n;
    }
    return out;
  };
  std::vector<uint8_t> bitmap(static_cast<size_t>(batch * heads * nb * nb), kDead);
  std::vector<std::pair<double, int64_t>> candidates;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      const std::vector<double> qp = pooled(q, (b * heads + h) * seq);
      const std::vector<double> kp = pooled(k, (b * kv_heads + h / (heads / kv_heads)) * seq);
      uint8_t* rows = bitmap.data() + (b * heads + h) * nb * nb;
      for (int64_t qb = 0; qb < nb; ++qb) {
        uint8_t* row = rows + qb * nb;
        candidates.clear();
        for (int64_t kb = 0; kb < nb; ++kb) {
          if (causal && kb > qb) continue;
          const int64_t d = qb >= kb ? qb - kb : kb - qb;
          const bool near = causal ? qb - kb < window_blocks : 2 * d < window_blocks;
          if (near || kb < global_blocks) {
            row[kb] = causal && kb == qb ? kPartial : kWhole;
            continue;
          }
          double score = 0;
          for (int64_t x = 0; x < D; ++x) score += qp[static_cast<size_t>(qb * D + x)] * kp[static_cast<size_t>(kb * D + x)];
          candidates.emplace_back(-score, kb);  // ascending: largest score, then lowest index
        }
        const size_t keep = std::min(candidates.size(), static_cast<size_t>(topk));
        std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(keep), candidates.end());
        for (size_t n = 0; n < keep; ++n) row[candidates[n].second] = kWhole;
      }
    }
  ElementRule rule;
  rule.causal = causal;
  return from_block_bitmap(seq, seq, block, static_cast<int>(batch * heads), bitmap, rule);
}

}  // namespace stepscope::kernels
