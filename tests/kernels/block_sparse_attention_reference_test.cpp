// The block-sparse attention reference against a dense masked attention
// written here from the definition (every (i, j) pair, its permission read
// from the dense block bitmap and the rule), on fresh random inputs with
// grouped-query heads and per-head masks; its backward against finite
// differences; and the inputs it must refuse.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/block_mask_builders.h"
#include "kernels/block_sparse_attention_reference.h"

namespace stepscope::kernels {
namespace {

struct Seeded {
  unsigned seed = std::random_device{}();
  std::mt19937 rng{seed};
  std::string trace() const { return "seed " + std::to_string(seed); }
};

std::vector<float> random_values(std::mt19937& rng, int64_t n) {
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = g(rng);
  return v;
}

struct Dense {
  std::vector<double> out, lse, dq, dk, dv;
};

// softmax(scale · q kᵀ + mask) v over every pair, and its gradients by the
// textbook formulas, in double.
Dense dense_reference(const AttentionShape& s, const BlockMask& m, const std::vector<float>& q,
                      const std::vector<float>& k, const std::vector<float>& v, const std::vector<float>& dout,
                      double scale) {
  const std::vector<uint8_t> bitmap = to_block_bitmap(m);
  const int64_t D = s.head_dim, rep = s.heads / s.kv_heads, qb = m.q_blocks(), kb = m.k_blocks();
  Dense r;
  r.out.assign(q.size(), 0), r.lse.assign(static_cast<size_t>(s.batch * s.heads * s.seq_q), 0);
  r.dq.assign(q.size(), 0), r.dk.assign(k.size(), 0), r.dv.assign(v.size(), 0);
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t g = m.groups == 1 ? 0 : m.groups == s.heads ? h : b * s.heads + h;
      const int64_t kvh = h / rep;
      for (int64_t i = 0; i < s.seq_q; ++i) {
        std::vector<double> p(static_cast<size_t>(s.seq_k), 0);
        std::vector<bool> on(static_cast<size_t>(s.seq_k), false);
        double top = -std::numeric_limits<double>::infinity();
        const size_t qi = static_cast<size_t>(((b * s.heads + h) * s.seq_q + i) * D);
        for (int64_t j = 0; j < s.seq_k; ++j) {
          const uint8_t cell = bitmap[static_cast<size_t>((g * qb + i / m.block) * kb + j / m.block)];
          if (cell == 0 || (cell == 2 && !m.rule.allows(i, j))) continue;
          on[j] = true;
          const size_t kj = static_cast<size_t>(((b * s.kv_heads + kvh) * s.seq_k + j) * D);
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += static_cast<double>(q[qi + d]) * k[kj + d];
          p[j] = scale * dot;
          top = std::max(top, p[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < s.seq_k; ++j) sum += on[j] ? std::exp(p[j] - top) : 0;
        const size_t row = static_cast<size_t>((b * s.heads + h) * s.seq_q + i);
        r.lse[row] = sum > 0 ? top + std::log(sum) : -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < s.seq_k; ++j) p[j] = on[j] ? std::exp(p[j] - top) / sum : 0;
        // out, then dP = dO·V, D_i = Σ_j P dP, dS = P (dP − D_i).
        std::vector<double> dp(static_cast<size_t>(s.seq_k), 0);
        double delta = 0;
        for (int64_t j = 0; j < s.seq_k; ++j) {
          if (!on[j]) continue;
          const size_t kj = static_cast<size_t>(((b * s.kv_heads + kvh) * s.seq_k + j) * D);
          for (int64_t d = 0; d < D; ++d) {
            r.out[qi + d] += p[j] * v[kj + d];
            dp[j] += static_cast<double>(dout[qi + d]) * v[kj + d];
          }
          delta += p[j] * dp[j];
        }
        for (int64_t j = 0; j < s.seq_k; ++j) {
          if (!on[j]) continue;
          const size_t kj = static_cast<size_t>(((b * s.kv_heads + kvh) * s.seq_k + j) * D);
          const double ds = p[j] * (dp[j] - delta);
          for (int64_t d = 0; d < D; ++d) {
            r.dq[qi + d] += scale * ds * k[kj + d];
            r.dk[kj + d] += scale * ds * q[qi + d];
            r.dv[kj + d] += p[j] * dout[qi + d];
          }
        }
      }
    }
  return r;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double worst = 0;
  size_t at = 0;
  for (size_t n = 0; n < got.size(); ++n) {
    if (std::isinf(want[n])) {
      EXPECT_TRUE(std::isinf(got[n]) && got[n] < 0) << what << "[" << n << "]";
      continue;
    }
    const double err = std::abs(got[n] - want[n]) / (1 + std::abs(want[n]));
    if (err > worst) worst = err, at = n;
  }
  EXPECT_LE(worst, tol) << what << "[" << at << "]: " << got[at] << " vs " << want[at];
}

struct Case {
  const char* name;
  BlockMask mask;
  AttentionShape shape;
};

// Every builder's pattern, grouped-query heads (4 query heads on 2 K/V
// heads), two sequences, a ragged last block; and a random per-head layout
// (groups = heads) with partial blocks under a causal rule. Tolerance: the
// reference computes in double and rounds once to float (≈ 6e-8 relative);
// 1e-5 relative leaves room for float inputs' products only.
TEST(BlockSparseAttentionReference, MatchesDenseMaskedAttentionForEveryPattern) {
  Seeded s;
  SCOPED_TRACE(s.trace());
  const AttentionShape shape{2, 4, 2, 200, 200, 16};
  std::vector<Case> cases = {
      {"causal", causal_mask(200, 32), shape},
      {"window", sliding_window_mask(200, 32, 45, true), shape},
      {"bidirectional window", sliding_window_mask(200, 32, 45, false), shape},
      {"documents", document_mask(std::vector<int64_t>{37, 80, 3, 80}, 32, true), shape},
      {"global + window", global_window_mask(200, 32, 20, 33, true), shape},
      {"strided", strided_mask(200, 32, 2, 3, true), shape},
      {"dilated", dilated_mask(200, 32, 3, 2, false), shape},
      {"bigbird", bigbird_mask(200, 32, 1, 3, 1, s.seed), shape},
  };
  // Per-head random layouts: every row keeps its diagonal (partial, causal) plus random blocks below it.
  std::vector<uint8_t> bitmap;
  const int64_t nb = 7;
  std::bernoulli_distribution coin(0.4);
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t q = 0; q < nb; ++q)
      for (int64_t k = 0; k < nb; ++k) bitmap.push_back(k == q ? 2 : k < q && coin(s.rng) ? 1 : 0);
  ElementRule causal;
  causal.causal = true;
  cases.push_back({"random per head", from_block_bitmap(200, 200, 32, 4, bitmap, causal), shape});
  for (Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_EQ(validate_block_mask(c.mask), "");
    const AttentionShape& sh = c.shape;
    const int64_t nq = sh.batch * sh.heads * sh.seq_q * sh.head_dim, nkv = sh.batch * sh.kv_heads * sh.seq_k * sh.head_dim;
    const std::vector<float> q = random_values(s.rng, nq), k = random_values(s.rng, nkv), v = random_values(s.rng, nkv),
                             dout = random_values(s.rng, nq);
    const double scale = 1 / std::sqrt(16.0);
    std::vector<float> out(nq), lse(sh.batch * sh.heads * sh.seq_q), dq(nq), dk(nkv), dv(nkv);
    block_sparse_attention_forward_reference(sh, c.mask, q, k, v, scale, out, lse);
    block_sparse_attention_backward_reference(sh, c.mask, q, k, v, out, dout, lse, scale, dq, dk, dv);
    const Dense want = dense_reference(sh, c.mask, q, k, v, dout, scale);
    expect_close(out, want.out, 1e-5, "out");
    expect_close(lse, want.lse, 1e-5, "lse");
    expect_close(dq, want.dq, 1e-5, "dq");
    expect_close(dk, want.dk, 1e-5, "dk");
    expect_close(dv, want.dv, 1e-5, "dv");
  }
}

// The backward is the gradient of L = Σ out ⊙ G: central differences on a
// few entries of q, k and v (double-precision forward through the float
// reference; step 1e-2, tolerance 2e-3 absolute on O(1) gradients).
TEST(BlockSparseAttentionReference, BackwardIsTheGradient) {
  Seeded s;
  SCOPED_TRACE(s.trace());
  const AttentionShape sh{1, 2, 1, 48, 48, 8};
  const BlockMask m = sliding_window_mask(48, 16, 20, true);
  const int64_t nq = 2 * 48 * 8, nkv = 48 * 8;
  std::vector<float> q = random_values(s.rng, nq), k = random_values(s.rng, nkv), v = random_values(s.rng, nkv);
  const std::vector<float> g = random_values(s.rng, nq);
  const double scale = 0.35;
  auto loss = [&]() {
    std::vector<float> out(nq), lse(2 * 48);
    block_sparse_attention_forward_reference(sh, m, q, k, v, scale, out, lse);
    double l = 0;
    for (int64_t n = 0; n < nq; ++n) l += static_cast<double>(out[n]) * g[n];
    return l;
  };
  std::vector<float> out(nq), lse(2 * 48), dq(nq), dk(nkv), dv(nkv);
  block_sparse_attention_forward_reference(sh, m, q, k, v, scale, out, lse);
  block_sparse_attention_backward_reference(sh, m, q, k, v, out, g, lse, scale, dq, dk, dv);
  std::uniform_int_distribution<int64_t> pick_q(0, nq - 1), pick_kv(0, nkv - 1);
  for (auto [tensor, grad, pick] : {std::tuple{&q, &dq, &pick_q}, std::tuple{&k, &dk, &pick_kv},
                                    std::tuple{&v, &dv, &pick_kv}}) {
    for (int n = 0; n < 6; ++n) {
      const int64_t at = (*pick)(s.rng);
      const float keep = (*tensor)[at];
      (*tensor)[at] = keep + 1e-2f;
      const double up = loss();
      (*tensor)[at] = keep - 1e-2f;
      const double down = loss();
      (*tensor)[at] = keep;
      EXPECT_NEAR((*grad)[at], (up - down) / 2e-2, 2e-3) << "entry " << at;
    }
  }
}

// A partial block whose rule allows none of its pairs leaves its queries
// with no key: out 0 and lse −inf, never NaN.
TEST(BlockSparseAttentionReference, QueriesWithoutKeysGetZero) {
  ElementRule causal;
  causal.causal = true;
  // One row block 0 sees only block 1, marked partial: every pair there is above the diagonal.
  const BlockMask m = from_block_bitmap(32, 32, 16, 1, std::vector<uint8_t>{0, 2, 1, 2}, causal);
  ASSERT_EQ(validate_block_mask(m), "");
  const AttentionShape sh{1, 1, 1, 32, 32, 4};
  std::vector<float> q(128, 1.0f), k(128, 0.5f), v(128, 2.0f), out(128, 7.0f), lse(32);
  block_sparse_attention_forward_reference(sh, m, q, k, v, 1.0, out, lse);
  for (int i = 0; i < 16; ++i) {
    EXPECT_TRUE(std::isinf(lse[i]) && lse[i] < 0);
    EXPECT_EQ(out[4 * i], 0.0f);
  }
  EXPECT_FLOAT_EQ(out[4 * 16], 2.0f);  // the second block's queries average v = 2
}

TEST(BlockSparseAttentionReference, RefusesWhatItCannotCompute) {
  const BlockMask m = causal_mask(64, 16);
  std::vector<float> q(64 * 8), k(64 * 8), v(64 * 8), out(64 * 8), lse(64);
  auto message = [&](AttentionShape sh, std::vector<float>& qq) {
    try {
      block_sparse_attention_forward_reference(sh, m, qq, k, v, 1.0, out, lse);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message({1, 1, 1, 64, 64, 8}, q), "accepted");
  std::vector<float> short_q(10);
  EXPECT_EQ(message({1, 1, 1, 64, 64, 8}, short_q), "q has 10 elements, expected 512");
  EXPECT_EQ(message({1, 3, 2, 64, 64, 8}, q), "heads (3) must be a multiple of kv_heads (2)");
  EXPECT_EQ(message({1, 1, 1, 32, 32, 8}, q), "q/k sequence lengths (32, 32) differ from the mask's (64, 64)");
  BlockMask bad = m;
  std::swap(bad.col_indices[1], bad.col_indices[2]);  // row 1 holds {0, 1}
  try {
    block_sparse_attention_forward_reference({1, 1, 1, 64, 64, 8}, bad, q, k, v, 1.0, out, lse);
    FAIL() << "a bad mask was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "mask: col_indices of row 1 are not strictly ascending at entry 2");
  }
}

}  // namespace
}  // namespace stepscope::kernels
