// The block-sparse attention CUDA kernels against the CPU reference on fresh
// random inputs, for every builder's pattern, a random per-head layout with
// grouped-query heads, both 16-bit dtypes and head dims 64 and 128. The
// reference runs on the same 16-bit-rounded inputs in double; the kernels
// accumulate in fp32 and round once to the dtype, so the bound is the
// output's rounding (bf16: 2^-8, fp16: 2^-11 relative) plus fp32
// accumulation: |gpu − ref| ≤ tol · (1 + |ref|) with tol 1.6e-2 (bf16) and
// 4e-3 (fp16), lse within 1e-4. Outputs start as NaN bytes, so an element the
// kernels never write fails. Every version with a backward (v1 SIMT, v3
// mma.sync, v4 with its whole-tile path, v5 with fast exponents, v6 to v11 on
// wgmma with v5's backward, v12 with the dK/dV pass on wgmma, v13 with dQ
// too, v14 with the forward's mask as bits, v15 with two blocks per SM at
// head dim 64, v16 storing dK/dV without GQA, v17 with documents as
// intervals) runs every case, with grouped-query heads; v16 and v17 also
// without (the path where dK/dV are stored, not added). Documents come
// packed whole (v17's intervals) and interleaved (its fallback). Skips
// without a GPU (CI).
#include <gtest/gtest.h>

#ifdef STEPSCOPE_HAVE_KERNELS_GPU
#include <cuda_runtime_api.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gpu_skip.h"
#include "kernels/bf16.h"
#include "kernels/block_mask_builders.h"
#include "kernels/block_sparse_attention_reference.h"
#include "kernels/device_buffer.h"
#include "kernels/document_spans.h"
#include "kernels/fp16.h"
#include "kernels/gpu/block_sparse_attention.h"
#endif

namespace stepscope::kernels {
namespace {

#ifdef STEPSCOPE_HAVE_KERNELS_GPU
using gpu::AttnDType;
using testing::DeviceBuffer;

uint16_t to_bits(AttnDType t, float f) { return t == AttnDType::kBFloat16 ? float_to_bf16_rne(f) : float_to_fp16_rne(f); }
float from_bits(AttnDType t, uint16_t b) { return t == AttnDType::kBFloat16 ? bf16_to_float(b) : fp16_to_float(b); }

struct Tensor16 {
  std::vector<uint16_t> bits;
  std::vector<float> values;  // the rounded values, what the reference sees
};

Tensor16 random_tensor(std::mt19937& rng, AttnDType t, int64_t n) {
  std::normal_distribution<float> g(0.0f, 1.0f);
  Tensor16 x;
  for (int64_t i = 0; i < n; ++i) {
    x.bits.push_back(to_bits(t, g(rng)));
    x.values.push_back(from_bits(t, x.bits.back()));
  }
  return x;
}

void expect_close(const std::vector<uint16_t>& got, AttnDType t, const std::vector<float>& want, double tol,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size());
  double worst = 0;
  size_t at = 0;
  for (size_t n = 0; n < got.size(); ++n) {
    const double g = from_bits(t, got[n]);
    const double err = std::isnan(g) ? 1e30 : std::abs(g - want[n]) / (1 + std::abs(want[n]));
    if (err > worst) worst = err, at = n;
  }
  EXPECT_LE(worst, tol) << what << "[" << at << "]: " << from_bits(t, got[at]) << " vs " << want[at];
}

template <class T>
DeviceBuffer& upload(DeviceBuffer& b, const std::vector<T>& v) {
  b.upload(v.data(), v.size() * sizeof(T));
  return b;
}

void run_case(const char* name, const BlockMask& mask, const AttentionShape& s, AttnDType dtype, std::mt19937& rng,
              int version) {
  SCOPED_TRACE(std::string(name) + (dtype == AttnDType::kBFloat16 ? " bf16" : " fp16") + " d" +
               std::to_string(s.head_dim) + " v" + std::to_string(version));
  ASSERT_EQ(validate_block_mask(mask), "");
  const int64_t nq = s.batch * s.heads * s.seq_q * s.head_dim, nkv = s.batch * s.kv_heads * s.seq_k * s.head_dim;
  const int64_t rows = s.batch * s.heads * s.seq_q;
  const Tensor16 q = random_tensor(rng, dtype, nq), k = random_tensor(rng, dtype, nkv),
                 v = random_tensor(rng, dtype, nkv), dout = random_tensor(rng, dtype, nq);
  const double scale = 1 / std::sqrt(static_cast<double>(s.head_dim));
  std::vector<float> out(nq), lse(rows), dq(nq), dk(nkv), dv(nkv);
  block_sparse_attention_forward_reference(s, mask, q.values, k.values, v.values, scale, out, lse);
  // The backward reference takes the kernel's own rounded output, as autograd would.
  std::vector<float> out_rounded(nq);
  for (int64_t n = 0; n < nq; ++n) out_rounded[n] = from_bits(dtype, to_bits(dtype, out[n]));
  block_sparse_attention_backward_reference(s, mask, q.values, k.values, v.values, out_rounded, dout.values, lse, scale,
                                            dq, dk, dv);

  const BlockMask cols = transpose_block_mask(mask);
  DeviceBuffer dq_in(nq * 2), dk_in(nkv * 2), dv_in(nkv * 2), ddout(nq * 2), dout_buf(nq * 2, 0xFF),
      dlse(rows * 4, 0xFF), ddq(nq * 2, 0xFF), ddk(nkv * 2, 0xFF), ddv(nkv * 2, 0xFF),
      ro(mask.row_offsets.size() * 4), ci(mask.col_indices.size() * 4), pa(mask.partial.size()),
      tro(cols.row_offsets.size() * 4), tci(cols.col_indices.size() * 4), tpa(cols.partial.size()),
      docs(mask.rule.doc_ids.size() * 4), spans(mask.rule.doc_ids.size() * 8),
      ws(gpu::block_sparse_attention_workspace_bytes(s));
  const std::vector<int32_t> doc_spans =
      document_spans(mask.rule.doc_ids.data(), static_cast<int64_t>(mask.rule.doc_ids.size()));
  if (!doc_spans.empty()) upload(spans, doc_spans);
  upload(dq_in, q.bits), upload(dk_in, k.bits), upload(dv_in, v.bits), upload(ddout, dout.bits);
  upload(ro, mask.row_offsets), upload(ci, mask.col_indices), upload(pa, mask.partial);
  upload(tro, cols.row_offsets), upload(tci, cols.col_indices), upload(tpa, cols.partial);
  if (!mask.rule.doc_ids.empty()) upload(docs, mask.rule.doc_ids);
  gpu::DeviceBlockMask dm;
  dm.rows = {ro.as<int32_t>(), ci.as<int32_t>(), pa.as<uint8_t>()};
  dm.cols = {tro.as<int32_t>(), tci.as<int32_t>(), tpa.as<uint8_t>()};
  dm.groups = mask.groups, dm.block = mask.block, dm.causal = mask.rule.causal, dm.window = mask.rule.window;
  dm.global_tokens = mask.rule.global_tokens;
  dm.doc_ids = mask.rule.doc_ids.empty() ? nullptr : docs.as<int32_t>();
  dm.doc_spans = doc_spans.empty() ? nullptr : spans.as<int32_t>();
  ASSERT_EQ(gpu::block_sparse_attention_forward(dq_in.ptr(), dk_in.ptr(), dv_in.ptr(), s, dm, static_cast<float>(scale),
                                                dtype, dout_buf.ptr(), dlse.as<float>(), nullptr, version),
            "");
  ASSERT_EQ(gpu::block_sparse_attention_backward(dq_in.ptr(), dk_in.ptr(), dv_in.ptr(), dout_buf.ptr(), ddout.ptr(),
                                                 dlse.as<float>(), s, dm, static_cast<float>(scale), dtype, ddq.ptr(),
                                                 ddk.ptr(), ddv.ptr(), ws.ptr(), nullptr, version),
            "");
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const double tol = dtype == AttnDType::kBFloat16 ? 1.6e-2 : 4e-3;
  expect_close(dout_buf.download<uint16_t>(), dtype, out, tol, "out");
  const std::vector<float> got_lse = dlse.download<float>();
  for (int64_t n = 0; n < rows; ++n) {
    if (std::isinf(lse[n])) EXPECT_TRUE(std::isinf(got_lse[n])) << "lse[" << n << "]";
    else EXPECT_NEAR(got_lse[n], lse[n], 1e-4 * (1 + std::abs(lse[n]))) << "lse[" << n << "]";
  }
  expect_close(ddq.download<uint16_t>(), dtype, dq, 2 * tol, "dq");
  expect_close(ddk.download<uint16_t>(), dtype, dk, 2 * tol, "dk");
  expect_close(ddv.download<uint16_t>(), dtype, dv, 2 * tol, "dv");
}

TEST(BlockSparseAttentionGpu, MatchesReferenceForEveryPattern) {
  SKIP_WITHOUT_GPU();
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int version : {1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17})
    for (int64_t kv_heads : {2, 4})
    for (AttnDType dtype : {AttnDType::kBFloat16, AttnDType::kFloat16})
      for (int64_t d : {64, 128}) {
        if (kv_heads == 4 && version < 16) continue;  // the same path as with GQA
        const AttentionShape s{2, 4, kv_heads, 300, 300, d};
        SCOPED_TRACE("kv_heads " + std::to_string(kv_heads));
        auto run = [&](const char* name, const BlockMask& m) { run_case(name, m, s, dtype, rng, version); };
        run("causal", causal_mask(300, 64));
        run("causal, blocks of 128", causal_mask(300, 128));
        run("window", sliding_window_mask(300, 64, 100, true));
        run("two-way window, blocks of 48", sliding_window_mask(300, 48, 70, false));
        run("documents", document_mask(std::vector<int64_t>{40, 130, 7, 123}, 32, true));
        run("global + window", global_window_mask(300, 32, 20, 50, true));
        run("bigbird", bigbird_mask(300, 32, 1, 3, 2, seed));
        std::vector<uint8_t> bitmap;
        std::bernoulli_distribution coin(0.3);
        for (int64_t h = 0; h < 4; ++h)
          for (int64_t qb = 0; qb < 10; ++qb)
            for (int64_t kb = 0; kb < 10; ++kb) bitmap.push_back(kb == qb ? 2 : kb < qb && coin(rng) ? 1 : 0);
        ElementRule causal;
        causal.causal = true;
        run("random per head", from_block_bitmap(300, 300, 32, 4, bitmap, causal));
        ElementRule interleaved = causal;  // documents not one run each: no spans
        for (int32_t t = 0; t < 300; ++t) interleaved.doc_ids.push_back(t % 3);
        std::vector<uint8_t> lower;
        for (int64_t qb = 0; qb < 10; ++qb)
          for (int64_t kb = 0; kb < 10; ++kb) lower.push_back(kb <= qb ? 2 : 0);
        run("interleaved documents", from_block_bitmap(300, 300, 32, 1, lower, interleaved));
      }
}

TEST(BlockSparseAttentionGpu, RefusesUnsupportedShapesBeforeLaunching) {
  SKIP_WITHOUT_GPU();
  gpu::DeviceBlockMask dm;
  dm.block = 64;
  const AttentionShape s{1, 2, 1, 128, 128, 96};
  EXPECT_EQ(gpu::block_sparse_attention_forward(nullptr, nullptr, nullptr, s, dm, 1.0f, AttnDType::kBFloat16, nullptr,
                                                nullptr, nullptr),
            "block_sparse_attention: head_dim 96 is not supported (64 or 128)");
  AttentionShape ok = s;
  ok.head_dim = 64;
  EXPECT_EQ(gpu::block_sparse_attention_forward(nullptr, nullptr, nullptr, ok, dm, 1.0f, AttnDType::kBFloat16, nullptr,
                                                nullptr, nullptr),
            "block_sparse_attention_forward: a null pointer");
}
#endif

}  // namespace
}  // namespace stepscope::kernels
