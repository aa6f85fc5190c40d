#include "kernels/block_sparse_attention_reference.h"

#include <fmt/core.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace stepscope::kernels {
namespace {

int64_t group_of(const BlockMask& m, const AttentionShape& s, int64_t b, int64_t h) {
  if (m.groups == 1) return 0;
  if (m.groups == s.heads) return h;
  return b * s.heads + h;
}

void check_span(const char* name, size_t got, int64_t want) {
  if (static_cast<int64_t>(got) != want)
    throw std::invalid_argument(fmt::format("{} has {} elements, expected {}", name, got, want));
}

void check_all(const AttentionShape& s, const BlockMask& m) {
  if (std::string bad = validate_block_mask(m); !bad.empty()) throw std::invalid_argument("mask: " + bad);
  if (std::string bad = check_attention_shape(s, m); !bad.empty()) throw std::invalid_argument(bad);
}

// q, k, v, out and lse of the shape (both passes take them).
void check_inputs(const AttentionShape& s, size_t q, size_t k, size_t v, size_t out, size_t lse) {
  const int64_t nq = s.batch * s.heads * s.seq_q * s.head_dim, nkv = s.batch * s.kv_heads * s.seq_k * s.head_dim;
  check_span("q", q, nq);
  check_span("k", k, nkv);
  check_span("v", v, nkv);
  check_span("out", out, nq);
  check_span("lse", lse, s.batch * s.heads * s.seq_q);
}

// The keys query i of (b, h) attends, in ascending order.
std::vector<int64_t> attended_keys(const BlockMask& m, const AttentionShape& s, int64_t b, int64_t h, int64_t i) {
  std::vector<int64_t> keys;
  const int64_t row = group_of(m, s, b, h) * m.q_blocks() + i / m.block;
  for (int32_t e = m.row_offsets[static_cast<size_t>(row)]; e < m.row_offsets[static_cast<size_t>(row) + 1]; ++e) {
    const int64_t begin = static_cast<int64_t>(m.col_indices[static_cast<size_t>(e)]) * m.block;
    const int64_t end = std::min(s.seq_k, begin + m.block);
    const bool partial = m.partial[static_cast<size_t>(e)] != 0;
    for (int64_t j = begin; j < end; ++j)
      if (!partial || m.rule.allows(i, j)) keys.push_back(j);
  }
  return keys;
}

struct Index {
  const AttentionShape& s;
  int64_t q(int64_t b, int64_t h, int64_t i) const { return ((b * s.heads + h) * s.seq_q + i) * s.head_dim; }
  int64_t kv(int64_t b, int64_t h, int64_t j) const {
    const int64_t kvh = h / (s.heads / s.kv_heads);
    return ((b * s.kv_heads + kvh) * s.seq_k + j) * s.head_dim;
  }
  int64_t row(int64_t b, int64_t h, int64_t i) const { return (b * s.heads + h) * s.seq_q + i; }
};

double dot(const float* a, const float* b, int64_t n) {
  double acc = 0;
  for (int64_t d = 0; d < n; ++d) acc += static_cast<double>(a[d]) * b[d];
  return acc;
}

}  // namespace

std::string check_attention_shape(const AttentionShape& s, const BlockMask& m) {
  if (s.batch < 1 || s.heads < 1 || s.kv_heads < 1 || s.head_dim < 1)
    return fmt::format("batch ({}), heads ({}), kv_heads ({}) and head_dim ({}) must be positive", s.batch, s.heads,
                       s.kv_heads, s.head_dim);
  if (s.heads % s.kv_heads != 0)
    return fmt::format("heads ({}) must be a multiple of kv_heads ({})", s.heads, s.kv_heads);
  if (s.seq_q != m.seq_q || s.seq_k != m.seq_k)
    return fmt::format("q/k sequence lengths ({}, {}) differ from the mask's ({}, {})", s.seq_q, s.seq_k, m.seq_q,
                       m.seq_k);
  if (m.groups != 1 && m.groups != s.heads && m.groups != s.batch * s.heads)
    return fmt::format("mask groups ({}) must be 1, heads ({}) or batch × heads ({})", m.groups, s.heads,
                       s.batch * s.heads);
  return "";
}

bool attends(const BlockMask& m, const AttentionShape& s, int64_t b, int64_t h, int64_t i, int64_t j) {
  const int64_t row = group_of(m, s, b, h) * m.q_blocks() + i / m.block;
  const int64_t kb = j / m.block;
  for (int32_t e = m.row_offsets[static_cast<size_t>(row)]; e < m.row_offsets[static_cast<size_t>(row) + 1]; ++e)
    if (m.col_indices[static_cast<size_t>(e)] == kb) return !m.partial[static_cast<size_t>(e)] || m.rule.allows(i, j);
  return false;
}

void block_sparse_attention_forward_reference(const AttentionShape& s, const BlockMask& m, std::span<const float> q,
                                              std::span<const float> k, std::span<const float> v, double scale,
                                              std::span<float> out, std::span<float> lse) {
  check_all(s, m);
  check_inputs(s, q.size(), k.size(), v.size(), out.size(), lse.size());
  const Index at{s};
  const int64_t D = s.head_dim;
  std::vector<double> scores, acc(static_cast<size_t>(D));
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h)
      for (int64_t i = 0; i < s.seq_q; ++i) {
        const std::vector<int64_t> keys = attended_keys(m, s, b, h, i);
        float* o = out.data() + at.q(b, h, i);
        if (keys.empty()) {
          std::fill(o, o + D, 0.0f);
          lse[static_cast<size_t>(at.row(b, h, i))] = -std::numeric_limits<float>::infinity();
          continue;
        }
        const float* qi = q.data() + at.q(b, h, i);
        scores.resize(keys.size());
        double top = -std::numeric_limits<double>::infinity();
        for (size_t n = 0; n < keys.size(); ++n) {
          scores[n] = scale * dot(qi, k.data() + at.kv(b, h, keys[n]), D);
          top = std::max(top, scores[n]);
        }
        double sum = 0;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (size_t n = 0; n < keys.size(); ++n) {
          const double p = std::exp(scores[n] - top);
          sum += p;
          const float* vj = v.data() + at.kv(b, h, keys[n]);
          for (int64_t d = 0; d < D; ++d) acc[static_cast<size_t>(d)] += p * vj[d];
        }
        for (int64_t d = 0; d < D; ++d) o[d] = static_cast<float>(acc[static_cast<size_t>(d)] / sum);
        lse[static_cast<size_t>(at.row(b, h, i))] = static_cast<float>(top + std::log(sum));
      }
}

void block_sparse_attention_backward_reference(const AttentionShape& s, const BlockMask& m, std::span<const float> q,
                                               std::span<const float> k, std::span<const float> v,
                                               std::span<const float> out, std::span<const float> dout,
                                               std::span<const float> lse, double scale, std::span<float> dq,
                                               std::span<float> dk, std::span<float> dv) {
  check_all(s, m);
  check_inputs(s, q.size(), k.size(), v.size(), out.size(), lse.size());
  const int64_t nq = s.batch * s.heads * s.seq_q * s.head_dim, nkv = s.batch * s.kv_heads * s.seq_k * s.head_dim;
  check_span("dout", dout.size(), nq);
  check_span("dq", dq.size(), nq);
  check_span("dk", dk.size(), nkv);
  check_span("dv", dv.size(), nkv);
  const Index at{s};
  const int64_t D = s.head_dim;
  std::vector<double> dk_acc(static_cast<size_t>(nkv), 0.0), dv_acc(static_cast<size_t>(nkv), 0.0);
  std::vector<double> dq_row(static_cast<size_t>(D));
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h)
      for (int64_t i = 0; i < s.seq_q; ++i) {
        const std::vector<int64_t> keys = attended_keys(m, s, b, h, i);
        const float* qi = q.data() + at.q(b, h, i);
        const float* doi = dout.data() + at.q(b, h, i);
        std::fill(dq_row.begin(), dq_row.end(), 0.0);
        // D_i = dO_i · O_i (the softmax backward's row term).
        const double delta = dot(doi, out.data() + at.q(b, h, i), D);
        const double row_lse = lse[static_cast<size_t>(at.row(b, h, i))];
        for (int64_t j : keys) {
          const int64_t kj = at.kv(b, h, j);
          const double p = std::exp(scale * dot(qi, k.data() + kj, D) - row_lse);
          const double dp = dot(doi, v.data() + kj, D);
          const double ds = p * (dp - delta);
          for (int64_t d = 0; d < D; ++d) {
            dq_row[static_cast<size_t>(d)] += scale * ds * k[static_cast<size_t>(kj + d)];
            dk_acc[static_cast<size_t>(kj + d)] += scale * ds * qi[d];
            dv_acc[static_cast<size_t>(kj + d)] += p * doi[d];
          }
        }
        float* dqi = dq.data() + at.q(b, h, i);
        for (int64_t d = 0; d < D; ++d) dqi[d] = static_cast<float>(dq_row[static_cast<size_t>(d)]);
      }
  for (int64_t n = 0; n < nkv; ++n) {
    dk[static_cast<size_t>(n)] = static_cast<float>(dk_acc[static_cast<size_t>(n)]);
    dv[static_cast<size_t>(n)] = static_cast<float>(dv_acc[static_cast<size_t>(n)]);
  }
}

}  // namespace stepscope::kernels
