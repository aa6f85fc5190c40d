// The fused QKV split + RoPE CUDA kernels against the CPU reference on fresh
// random inputs: outputs must be equal bit for bit (both sides compute the
// same fp32 fma expressions, each correctly rounded, and round once to the
// dtype). Outputs are poisoned with NaN bytes first, so an element the kernel
// never writes fails. Odd sizes, GQA, every vector width, misaligned
// pointers and bad dimensions are covered. Skips without a GPU (CI).
#include <gtest/gtest.h>

#ifdef STEPSCOPE_HAVE_KERNELS_GPU
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "gpu_skip.h"
#include "kernels/device_buffer.h"
#include "kernels/bf16.h"
#include "kernels/fp16.h"
#include "kernels/gpu/qkv_rope.h"
#include "kernels/qkv_rope_reference.h"
#endif

namespace stepscope::kernels {
namespace {

#ifdef STEPSCOPE_HAVE_KERNELS_GPU
using gpu::RopeDType;

using testing::DeviceBuffer;

// Filled with 0xFF: NaN in fp32, fp16 and bf16, so an element a kernel did
// not write fails the comparison.
constexpr int kNaNFill = 0xFF;

size_t esize(RopeDType t) { return t == RopeDType::kFloat32 ? 4 : 2; }
const char* dname(RopeDType t) {
  return t == RopeDType::kFloat32 ? "fp32" : t == RopeDType::kFloat16 ? "fp16" : "bf16";
}

// n random values in [-4, 4) stored as the dtype (raw bytes).
std::vector<unsigned char> random_raw(std::mt19937& rng, RopeDType t, int64_t n) {
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<unsigned char> raw(static_cast<size_t>(n) * esize(t));
  for (int64_t i = 0; i < n; ++i) {
    const float f = u(rng);
    if (t == RopeDType::kFloat32) {
      std::memcpy(raw.data() + 4 * i, &f, 4);
    } else {
      const uint16_t b = t == RopeDType::kBFloat16 ? float_to_bf16_rne(f) : float_to_fp16_rne(f);
      std::memcpy(raw.data() + 2 * i, &b, 2);
    }
  }
  return raw;
}

template <class T>
std::span<const T> as_span(const std::vector<unsigned char>& raw) {
  return {reinterpret_cast<const T*>(raw.data()), raw.size() / sizeof(T)};
}
template <class T>
std::span<T> as_mut_span(std::vector<unsigned char>& raw) {
  return {reinterpret_cast<T*>(raw.data()), raw.size() / sizeof(T)};
}

void reference_forward(RopeDType t, const std::vector<unsigned char>& qkv, const RopeTables& tab, const QkvRopeDims& d,
                       std::vector<unsigned char>& q, std::vector<unsigned char>& k, std::vector<unsigned char>& v) {
  if (t == RopeDType::kFloat32) {
    qkv_rope_forward_reference(as_span<float>(qkv), tab.cos, tab.sin, d, as_mut_span<float>(q), as_mut_span<float>(k),
                               as_mut_span<float>(v));
  } else {
    qkv_rope_forward_reference_16(t == RopeDType::kBFloat16, as_span<uint16_t>(qkv), tab.cos, tab.sin, d,
                                  as_mut_span<uint16_t>(q), as_mut_span<uint16_t>(k), as_mut_span<uint16_t>(v));
  }
}

void reference_backward(RopeDType t, const std::vector<unsigned char>& gq, const std::vector<unsigned char>& gk,
                        const std::vector<unsigned char>& gv, const RopeTables& tab, const QkvRopeDims& d,
                        std::vector<unsigned char>& gqkv) {
  if (t == RopeDType::kFloat32) {
    qkv_rope_backward_reference(as_span<float>(gq), as_span<float>(gk), as_span<float>(gv), tab.cos, tab.sin, d,
                                as_mut_span<float>(gqkv));
  } else {
    qkv_rope_backward_reference_16(t == RopeDType::kBFloat16, as_span<uint16_t>(gq), as_span<uint16_t>(gk),
                                   as_span<uint16_t>(gv), tab.cos, tab.sin, d, as_mut_span<uint16_t>(gqkv));
  }
}

// Index of the first differing element, or -1.
int64_t first_difference(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b, size_t es) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); i += es) {
    if (std::memcmp(a.data() + i, b.data() + i, es) != 0) return static_cast<int64_t>(i / es);
  }
  return -1;
}

// Runs forward and backward on the GPU for dims d (pad bytes in front of
// every buffer) and compares both with the reference.
void check_against_reference(std::mt19937& rng, RopeDType t, const QkvRopeDims& d, size_t pad, int expect_width) {
  SCOPED_TRACE(std::string(dname(t)) + " B=" + std::to_string(d.batch) + " S=" + std::to_string(d.seq) +
               " H=" + std::to_string(d.heads) + " Hkv=" + std::to_string(d.kv_heads) +
               " D=" + std::to_string(d.head_dim) + " pad=" + std::to_string(pad));
  const size_t es = esize(t);
  const RopeTables tab = rope_tables_reference(d.table_len, d.head_dim, 10000.0);
  const std::vector<unsigned char> qkv = random_raw(rng, t, d.qkv_numel());
  std::vector<unsigned char> q(d.q_numel() * es), k(d.kv_numel() * es), v(d.kv_numel() * es);
  reference_forward(t, qkv, tab, d, q, k, v);

  DeviceBuffer dqkv(qkv.size(), kNaNFill, pad), dq(q.size(), kNaNFill, pad), dk(k.size(), kNaNFill, pad),
      dv(v.size(), kNaNFill, pad);
  DeviceBuffer dcos(tab.cos.size() * 4, kNaNFill), dsin(tab.sin.size() * 4, kNaNFill);
  dqkv.upload(qkv.data());
  dcos.upload(tab.cos.data());
  dsin.upload(tab.sin.data());
  const auto* cosp = static_cast<const float*>(dcos.ptr());
  const auto* sinp = static_cast<const float*>(dsin.ptr());
  const void* ptrs[4] = {dqkv.ptr(), dq.ptr(), dk.ptr(), dv.ptr()};
  EXPECT_EQ(gpu::qkv_rope_vector_width(d, t, ptrs, 4, cosp, sinp), expect_width);

  ASSERT_EQ(gpu::qkv_rope_forward(dqkv.ptr(), cosp, sinp, d, t, dq.ptr(), dk.ptr(), dv.ptr(), nullptr), "");
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(first_difference(dq.download(), q, es), -1) << "q differs";
  EXPECT_EQ(first_difference(dk.download(), k, es), -1) << "k differs";
  EXPECT_EQ(first_difference(dv.download(), v, es), -1) << "v differs";

  // Backward on fresh random gradients.
  const std::vector<unsigned char> gq = random_raw(rng, t, d.q_numel()), gk = random_raw(rng, t, d.kv_numel()),
                                   gv = random_raw(rng, t, d.kv_numel());
  std::vector<unsigned char> gqkv(qkv.size());
  reference_backward(t, gq, gk, gv, tab, d, gqkv);
  DeviceBuffer dgq(gq.size(), kNaNFill, pad), dgk(gk.size(), kNaNFill, pad), dgv(gv.size(), kNaNFill, pad),
      dgqkv(gqkv.size(), kNaNFill, pad);
  dgq.upload(gq.data());
  dgk.upload(gk.data());
  dgv.upload(gv.data());
  ASSERT_EQ(gpu::qkv_rope_backward(dgq.ptr(), dgk.ptr(), dgv.ptr(), cosp, sinp, d, t, dgqkv.ptr(), nullptr), "");
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(first_difference(dgqkv.download(), gqkv, es), -1) << "grad_qkv differs";
}

struct Case {
  QkvRopeDims d;
  int width_16;  // expected vector width for 2-byte types (fp32: min(width_16, 4))
};

TEST(QkvRopeGpu, MatchesReferenceBitForBit) {
  SKIP_WITHOUT_GPU();
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const Case cases[] = {
      {{1, 1, 1, 1, 2, 1}, 1},          // smallest
      {{3, 17, 4, 2, 64, 20}, 8},       // GQA, odd batch and seq, table longer than seq
      {{2, 33, 6, 3, 6, 33}, 1},        // head_dim / 2 = 3: scalar path
      {{2, 7, 2, 2, 12, 7}, 2},         // head_dim / 2 = 6: 2-wide
      {{1, 9, 3, 3, 8, 9}, 4},          // head_dim / 2 = 4
      {{1, 5, 8, 1, 256, 5}, 8},        // largest head_dim, one kv head (MQA)
      {{5, 129, 32, 8, 128, 130}, 8},   // Llama-like GQA, more work than one pass of threads
  };
  for (RopeDType t : {RopeDType::kFloat32, RopeDType::kBFloat16, RopeDType::kFloat16}) {
    for (const Case& c : cases) {
      const int w = t == RopeDType::kFloat32 ? std::min(c.width_16, 4) : c.width_16;
      check_against_reference(rng, t, c.d, 0, w);
    }
  }
}

TEST(QkvRopeGpu, MisalignedPointersFallBackToNarrowerAccesses) {
  SKIP_WITHOUT_GPU();
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  // One element past a 256-byte boundary: no vector wider than one element fits.
  check_against_reference(rng, RopeDType::kBFloat16, {2, 11, 4, 2, 64, 11}, 2, 1);
  check_against_reference(rng, RopeDType::kFloat32, {2, 11, 4, 2, 64, 11}, 4, 1);
  // Four bf16 elements past it: 8-byte alignment allows 4-wide accesses.
  check_against_reference(rng, RopeDType::kBFloat16, {2, 11, 4, 2, 64, 11}, 8, 4);
}

TEST(QkvRopeGpu, RejectsBadArgumentsWithoutLaunching) {
  SKIP_WITHOUT_GPU();
  DeviceBuffer a(1 << 16, kNaNFill), b(1 << 16, kNaNFill);
  const auto* f = static_cast<const float*>(b.ptr());
  auto fwd = [&](QkvRopeDims d, RopeDType t = RopeDType::kBFloat16) {
    return gpu::qkv_rope_forward(a.ptr(), f, f, d, t, a.ptr(), a.ptr(), a.ptr(), nullptr);
  };
  EXPECT_NE(fwd({1, 4, 6, 4, 8, 4}).find("kv_heads"), std::string::npos);
  EXPECT_NE(fwd({1, 4, 4, 2, 7, 4}).find("head_dim"), std::string::npos);
  EXPECT_NE(fwd({1, 4, 4, 2, 258, 4}).find("head_dim"), std::string::npos);
  EXPECT_NE(fwd({1, 5, 4, 2, 8, 4}).find("table length"), std::string::npos);
  EXPECT_NE(fwd({1, 4, 4, 2, 8, 4}, static_cast<RopeDType>(9)).find("dtype"), std::string::npos);
  EXPECT_NE(gpu::qkv_rope_forward(nullptr, f, f, {1, 4, 4, 2, 8, 4}, RopeDType::kBFloat16, a.ptr(), a.ptr(), a.ptr(),
                                  nullptr)
                .find("null"),
            std::string::npos);
  EXPECT_NE(gpu::qkv_rope_backward(a.ptr(), a.ptr(), a.ptr(), f, nullptr, {1, 4, 4, 2, 8, 4}, RopeDType::kFloat16,
                                   a.ptr(), nullptr)
                .find("cos/sin"),
            std::string::npos);
  // An element-misaligned pointer is refused, not silently truncated.
  EXPECT_NE(gpu::qkv_rope_forward(static_cast<char*>(a.ptr()) + 1, f, f, {1, 4, 4, 2, 8, 4}, RopeDType::kBFloat16,
                                  a.ptr(), a.ptr(), a.ptr(), nullptr)
                .find("aligned"),
            std::string::npos);
  // An empty batch is valid and launches nothing.
  EXPECT_EQ(fwd({0, 4, 4, 2, 8, 4}), "");
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}
#endif

}  // namespace
}  // namespace stepscope::kernels
