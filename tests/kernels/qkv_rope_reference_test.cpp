// The CPU reference of the fused QKV split + RoPE against properties worked
// out independently of its code: the table's closed form, rotation by the
// position angle, norm preservation, relative-position invariance of q.k,
// backward as the exact adjoint of forward, the head layout, and the
// rejection of bad dimensions. Inputs are fresh random values; the seed is
// printed on failure.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/bf16.h"
#include "kernels/fp16.h"
#include "kernels/qkv_rope_reference.h"

namespace stepscope::kernels {
namespace {

struct Seeded {
  unsigned seed = std::random_device{}();
  std::mt19937 rng{seed};
  std::string trace() const { return "seed " + std::to_string(seed); }
};

std::vector<float> random_values(std::mt19937& rng, int64_t n, float lo = -2.0f, float hi = 2.0f) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  return v;
}

struct Outputs {
  std::vector<float> q, k, v;
};

Outputs forward(const std::vector<float>& qkv, const RopeTables& t, const QkvRopeDims& d) {
  Outputs o{std::vector<float>(static_cast<size_t>(d.q_numel())), std::vector<float>(static_cast<size_t>(d.kv_numel())),
            std::vector<float>(static_cast<size_t>(d.kv_numel()))};
  qkv_rope_forward_reference(qkv, t.cos, t.sin, d, o.q, o.k, o.v);
  return o;
}

TEST(RopeTables, ClosedForm) {
  // head_dim 4: frequencies base^0 = 1 and base^(-1/2) = 0.01 for base 10000.
  const RopeTables t = rope_tables_reference(50, 4, 10000.0);
  ASSERT_EQ(t.cos.size(), 100u);
  for (int s = 0; s < 50; ++s) {
    EXPECT_FLOAT_EQ(t.cos[s * 2 + 0], static_cast<float>(std::cos(s)));
    EXPECT_FLOAT_EQ(t.sin[s * 2 + 0], static_cast<float>(std::sin(s)));
    EXPECT_FLOAT_EQ(t.cos[s * 2 + 1], static_cast<float>(std::cos(0.01 * s)));
    EXPECT_FLOAT_EQ(t.sin[s * 2 + 1], static_cast<float>(std::sin(0.01 * s)));
  }
  EXPECT_THROW(rope_tables_reference(10, 3, 10000.0), std::invalid_argument);
  EXPECT_THROW(rope_tables_reference(10, 4, 1.0), std::invalid_argument);
}

TEST(QkvRopeReference, RotatesEachPairByThePositionAngle) {
  // head_dim 2: one pair per head, angle = s. (1, 0) at position s must become (cos s, sin s).
  const QkvRopeDims d{1, 7, 1, 1, 2, 7};
  const RopeTables t = rope_tables_reference(7, 2, 10000.0);
  std::vector<float> qkv(static_cast<size_t>(d.qkv_numel()), 0.0f);
  for (int s = 0; s < 7; ++s) {
    qkv[s * 6 + 0] = 1.0f;  // q: (1, 0)
    qkv[s * 6 + 3] = 1.0f;  // k: (0, 1) -> (-sin s, cos s)
    qkv[s * 6 + 4] = 5.0f;  // v: copied
    qkv[s * 6 + 5] = -6.0f;
  }
  const Outputs o = forward(qkv, t, d);
  for (int s = 0; s < 7; ++s) {
    EXPECT_NEAR(o.q[s * 2 + 0], std::cos(s), 1e-6) << "s=" << s;
    EXPECT_NEAR(o.q[s * 2 + 1], std::sin(s), 1e-6) << "s=" << s;
    EXPECT_NEAR(o.k[s * 2 + 0], -std::sin(s), 1e-6) << "s=" << s;
    EXPECT_NEAR(o.k[s * 2 + 1], std::cos(s), 1e-6) << "s=" << s;
    EXPECT_EQ(o.v[s * 2 + 0], 5.0f);
    EXPECT_EQ(o.v[s * 2 + 1], -6.0f);
  }
}

TEST(QkvRopeReference, PositionZeroIsIdentityAndLayoutIsPerHead) {
  // Every input element carries its own index; at s = 0 the rotation is the
  // identity, so each output element must hold the index of its source.
  const QkvRopeDims d{3, 5, 4, 2, 6, 9};  // GQA: 4 query heads share 2 kv heads
  const RopeTables t = rope_tables_reference(9, 6, 10000.0);
  std::vector<float> qkv(static_cast<size_t>(d.qkv_numel()));
  for (size_t i = 0; i < qkv.size(); ++i) qkv[i] = static_cast<float>(i);
  const Outputs o = forward(qkv, t, d);
  const int64_t nh = d.heads + 2 * d.kv_heads;
  auto src = [&](int64_t b, int64_t s, int64_t n, int64_t i) {
    return static_cast<float>(((b * d.seq + s) * nh + n) * d.head_dim + i);
  };
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t i = 0; i < d.head_dim; ++i) {
      for (int64_t h = 0; h < d.heads; ++h) {
        EXPECT_EQ(o.q[((b * d.heads + h) * d.seq + 0) * d.head_dim + i], src(b, 0, h, i));
      }
      for (int64_t h = 0; h < d.kv_heads; ++h) {
        EXPECT_EQ(o.k[((b * d.kv_heads + h) * d.seq + 0) * d.head_dim + i], src(b, 0, d.heads + h, i));
        // v is a copy at every position.
        for (int64_t s = 0; s < d.seq; ++s) {
          EXPECT_EQ(o.v[((b * d.kv_heads + h) * d.seq + s) * d.head_dim + i], src(b, s, d.heads + d.kv_heads + h, i));
        }
      }
    }
  }
}

TEST(QkvRopeReference, PreservesNormAndDependsOnlyOnRelativePosition) {
  Seeded r;
  SCOPED_TRACE(r.trace());
  const int64_t D = 16, S = 40;
  const QkvRopeDims d{1, S, 1, 1, D, S};
  const RopeTables t = rope_tables_reference(S, D, 10000.0);
  // The same q vector and k vector at every position.
  const std::vector<float> qv = random_values(r.rng, D), kv = random_values(r.rng, D);
  std::vector<float> qkv(static_cast<size_t>(d.qkv_numel()));
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t i = 0; i < D; ++i) {
      qkv[(s * 3 + 0) * D + i] = qv[i];
      qkv[(s * 3 + 1) * D + i] = kv[i];
    }
  }
  const Outputs o = forward(qkv, t, d);
  double qn = 0;
  for (float x : qv) qn += double(x) * x;
  auto dot = [&](int64_t sq, int64_t sk) {
    double acc = 0;
    for (int64_t i = 0; i < D; ++i) acc += double(o.q[sq * D + i]) * o.k[sk * D + i];
    return acc;
  };
  for (int64_t s = 0; s < S; ++s) {
    double n = 0;
    for (int64_t i = 0; i < D; ++i) n += double(o.q[s * D + i]) * o.q[s * D + i];
    EXPECT_NEAR(n, qn, 1e-5 * qn) << "s=" << s;  // a rotation keeps the norm
  }
  // q_m . k_n is a function of m - n only (the point of RoPE).
  for (int64_t delta : {0, 3, 17}) {
    const double ref = dot(delta, 0);
    for (int64_t n = 1; n + delta < S; n += 5) EXPECT_NEAR(dot(n + delta, n), ref, 2e-4 * (1 + std::abs(ref)));
  }
}

TEST(QkvRopeReference, BackwardIsTheAdjointOfForward) {
  // forward is linear in qkv: <forward(x), g> must equal <x, backward(g)>.
  Seeded r;
  SCOPED_TRACE(r.trace());
  const QkvRopeDims d{2, 11, 6, 3, 10, 13};
  const RopeTables t = rope_tables_reference(13, 10, 500.0);
  const std::vector<float> x = random_values(r.rng, d.qkv_numel());
  const Outputs y = forward(x, t, d);
  const std::vector<float> gq = random_values(r.rng, d.q_numel()), gk = random_values(r.rng, d.kv_numel()),
                           gv = random_values(r.rng, d.kv_numel());
  std::vector<float> gx(x.size());
  qkv_rope_backward_reference(gq, gk, gv, t.cos, t.sin, d, gx);
  double lhs = 0, rhs = 0, mag = 0;
  for (size_t i = 0; i < y.q.size(); ++i) lhs += double(y.q[i]) * gq[i];
  for (size_t i = 0; i < y.k.size(); ++i) lhs += double(y.k[i]) * gk[i] + double(y.v[i]) * gv[i];
  for (size_t i = 0; i < x.size(); ++i) {
    rhs += double(x[i]) * gx[i];
    mag += std::abs(double(x[i]) * gx[i]);
  }
  EXPECT_NEAR(lhs, rhs, 1e-6 * mag);
}

TEST(QkvRopeReference, SixteenBitPathsRoundTheFp32ResultOnce) {
  // With inputs exactly representable in the 16-bit type, the 16-bit result
  // must be the fp32 result rounded once (ties to even).
  Seeded r;
  SCOPED_TRACE(r.trace());
  const QkvRopeDims d{2, 9, 4, 1, 8, 9};
  const RopeTables t = rope_tables_reference(9, 8, 10000.0);
  for (bool bf16 : {true, false}) {
    SCOPED_TRACE(bf16 ? "bf16" : "fp16");
    std::vector<float> x = random_values(r.rng, d.qkv_numel(), -8.0f, 8.0f);
    std::vector<uint16_t> xb(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      xb[i] = bf16 ? float_to_bf16_rne(x[i]) : float_to_fp16_rne(x[i]);
      x[i] = bf16 ? bf16_to_float(xb[i]) : fp16_to_float(xb[i]);
    }
    const Outputs ref = forward(x, t, d);
    std::vector<uint16_t> q(ref.q.size()), k(ref.k.size()), v(ref.v.size());
    qkv_rope_forward_reference_16(bf16, xb, t.cos, t.sin, d, q, k, v);
    auto rnd = [&](float f) { return bf16 ? float_to_bf16_rne(f) : float_to_fp16_rne(f); };
    for (size_t i = 0; i < q.size(); ++i) ASSERT_EQ(q[i], rnd(ref.q[i])) << "q " << i;
    for (size_t i = 0; i < k.size(); ++i) ASSERT_EQ(k[i], rnd(ref.k[i])) << "k " << i;
    for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], rnd(ref.v[i])) << "v " << i;

    std::vector<uint16_t> gqkv(xb.size());
    qkv_rope_backward_reference_16(bf16, q, k, v, t.cos, t.sin, d, gqkv);
    std::vector<float> qf(q.size()), kf(k.size()), vf(v.size()), gref(x.size());
    auto wid = [&](uint16_t b) { return bf16 ? bf16_to_float(b) : fp16_to_float(b); };
    for (size_t i = 0; i < q.size(); ++i) qf[i] = wid(q[i]);
    for (size_t i = 0; i < k.size(); ++i) kf[i] = wid(k[i]), vf[i] = wid(v[i]);
    qkv_rope_backward_reference(qf, kf, vf, t.cos, t.sin, d, gref);
    for (size_t i = 0; i < gqkv.size(); ++i) ASSERT_EQ(gqkv[i], rnd(gref[i])) << "grad " << i;
    // Rotating back recovers the input to within two roundings of the type.
    const float tol = bf16 ? 2 * 8.0f / 128 : 2 * 8.0f / 1024;
    for (size_t i = 0; i < gqkv.size(); ++i) ASSERT_NEAR(wid(gqkv[i]), x[i], tol) << i;
  }
}

TEST(QkvRopeReference, EmptyBatchIsANoOp) {
  const QkvRopeDims d{0, 4, 2, 2, 4, 4};
  const RopeTables t = rope_tables_reference(4, 4, 10000.0);
  std::vector<float> none;
  EXPECT_NO_THROW(qkv_rope_forward_reference(none, t.cos, t.sin, d, none, none, none));
}

TEST(QkvRopeReference, RejectsBadDimensionsByName) {
  auto why = [](QkvRopeDims d) { return check_qkv_rope_dims(d); };
  EXPECT_EQ(why({2, 4, 4, 2, 8, 4}), "");
  EXPECT_NE(why({2, 4, 6, 4, 8, 4}).find("kv_heads"), std::string::npos);
  EXPECT_NE(why({2, 4, 4, 2, 7, 4}).find("head_dim"), std::string::npos);
  EXPECT_NE(why({2, 4, 4, 2, 258, 4}).find("head_dim"), std::string::npos);
  EXPECT_NE(why({2, 5, 4, 2, 8, 4}).find("table length"), std::string::npos);
  EXPECT_NE(why({2, 4, 0, 1, 8, 4}).find("heads"), std::string::npos);
  EXPECT_NE(why({-1, 4, 4, 2, 8, 4}).find("batch"), std::string::npos);

  const QkvRopeDims d{1, 2, 2, 1, 4, 2};
  const RopeTables t = rope_tables_reference(2, 4, 10000.0);
  std::vector<float> qkv(static_cast<size_t>(d.qkv_numel())), q(static_cast<size_t>(d.q_numel())),
      kv(static_cast<size_t>(d.kv_numel()));
  std::vector<float> short_q(q.size() - 1);
  EXPECT_THROW(qkv_rope_forward_reference(qkv, t.cos, t.sin, d, short_q, kv, kv), std::invalid_argument);
  std::vector<float> short_table(t.cos.size() - 1);
  EXPECT_THROW(qkv_rope_forward_reference(qkv, short_table, t.sin, d, q, kv, kv), std::invalid_argument);
  QkvRopeDims bad = d;
  bad.kv_heads = 3;
  EXPECT_THROW(qkv_rope_forward_reference(qkv, t.cos, t.sin, bad, q, kv, kv), std::invalid_argument);
}

}  // namespace
}  // namespace stepscope::kernels
