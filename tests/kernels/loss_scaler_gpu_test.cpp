// The loss scaler's CUDA kernels against the CPU reference: one launch over
// many gradient tensors of mixed dtypes and odd sizes (full vector tiles,
// partial tiles, misaligned data, empty tensors) with injected inf/NaN must
// give the reference's values bit for bit (NaN elements: NaN), its per-tensor
// counts and found_inf; the device scale update must follow the reference
// trajectory exactly, including inside a replayed CUDA graph. Skips without a
// GPU (CI).
#include <gtest/gtest.h>

#ifdef STEPSCOPE_HAVE_KERNELS_GPU
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gpu_skip.h"
#include "kernels/device_buffer.h"
#include "kernels/bf16.h"
#include "kernels/fp16.h"
#include "kernels/gpu/loss_scaler.h"
#include "kernels/loss_scaler_reference.h"
#endif

namespace stepscope::kernels {
namespace {

#ifdef STEPSCOPE_HAVE_KERNELS_GPU
using testing::DeviceBuffer;

size_t esize(GradDType t) { return t == GradDType::kFloat32 ? 4 : 2; }

float value_of(GradDType t, const unsigned char* p) {
  if (t == GradDType::kFloat32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t b;
  std::memcpy(&b, p, 2);
  return t == GradDType::kBFloat16 ? bf16_to_float(b) : fp16_to_float(b);
}

void store_value(GradDType t, unsigned char* p, float f) {
  if (t == GradDType::kFloat32) {
    std::memcpy(p, &f, 4);
    return;
  }
  const uint16_t b = t == GradDType::kBFloat16 ? float_to_bf16_rne(f) : float_to_fp16_rne(f);
  std::memcpy(p, &b, 2);
}

// A set of gradient tensors on host and device.
struct GradSet {
  std::vector<GradDType> dtype;
  std::vector<std::vector<unsigned char>> host;
  std::vector<std::unique_ptr<DeviceBuffer>> device;
  std::vector<void*> data;  // device data, misaligned by the requested offset
  std::vector<int64_t> numel;

  void add(std::mt19937& rng, GradDType t, int64_t n, size_t offset_bytes, int non_finite) {
    std::normal_distribution<float> normal(0.0f, 3000.0f);  // scaled gradients
    std::vector<unsigned char> h(static_cast<size_t>(n) * esize(t));
    for (int64_t i = 0; i < n; ++i) store_value(t, h.data() + i * esize(t), normal(rng));
    std::uniform_int_distribution<int64_t> pos(0, n > 0 ? n - 1 : 0);
    for (int j = 0; j < non_finite && n > 0; ++j) {
      const float bad = j % 3 == 0 ? std::nanf("") : (j % 3 == 1 ? INFINITY : -INFINITY);
      store_value(t, h.data() + pos(rng) * esize(t), bad);
    }
    device.push_back(std::make_unique<DeviceBuffer>(h.size(), 0, offset_bytes));
    device.back()->upload(h.data());
    dtype.push_back(t);
    host.push_back(std::move(h));
    data.push_back(device.back()->ptr());
    numel.push_back(n);
  }

  std::vector<gpu::GradTensorDesc> descs() const {
    std::vector<gpu::GradTensorDesc> v(dtype.size());
    for (size_t i = 0; i < v.size(); ++i) {
      v[i].data = data[i];
      v[i].numel = numel[i];
      v[i].dtype = static_cast<int32_t>(dtype[i]);
    }
    return v;
  }

  std::vector<HostGrad> host_grads() {
    std::vector<HostGrad> v;
    for (size_t i = 0; i < dtype.size(); ++i) v.push_back({dtype[i], host[i].data(), numel[i]});
    return v;
  }
};

// Plans the table and copies it to the device.
std::unique_ptr<DeviceBuffer> upload_table(std::vector<gpu::GradTensorDesc>& descs, int64_t* tiles) {
  EXPECT_EQ(gpu::plan_grad_tensors(descs, tiles), "");
  auto table = std::make_unique<DeviceBuffer>(descs.size() * sizeof(gpu::GradTensorDesc));
  table->upload(descs.data());
  return table;
}

void expect_matches_reference(const GradSet& g) {
  for (size_t t = 0; t < g.host.size(); ++t) {
    const std::vector<unsigned char> got = g.device[t]->download();
    const size_t es = esize(g.dtype[t]);
    for (int64_t i = 0; i < g.numel[t]; ++i) {
      const float want = value_of(g.dtype[t], g.host[t].data() + i * es);
      const float have = value_of(g.dtype[t], got.data() + i * es);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(have)) << "tensor " << t << " element " << i;
      } else {
        ASSERT_EQ(std::memcmp(g.host[t].data() + i * es, got.data() + i * es, es), 0)
            << "tensor " << t << " element " << i << ": want " << want << ", have " << have;
      }
    }
  }
}

void make_mixed_set(std::mt19937& rng, GradSet& g) {
  const GradDType f32 = GradDType::kFloat32, bf = GradDType::kBFloat16, h = GradDType::kFloat16;
  g.add(rng, f32, 1, 0, 0);
  g.add(rng, bf, 7, 0, 1);
  g.add(rng, f32, 0, 0, 0);                 // empty: owns no tile
  g.add(rng, h, 8192, 0, 0);                // exactly one full tile
  g.add(rng, f32, 8193, 0, 2);              // full tile + 1-element tail
  g.add(rng, bf, 3 * 8192 + 5, 0, 3);       // several full tiles + tail
  g.add(rng, f32, 100003, 4, 0);            // 4 bytes off 16-byte alignment: scalar path
  g.add(rng, bf, 8192 * 2, 2, 5);           // misaligned bf16
  g.add(rng, h, 70001, 0, 0);
  g.add(rng, f32, 0, 0, 0);                 // empty at the end
}

TEST(LossScalerGpu, UnscaleMatchesReferenceAcrossDtypesAndSizes) {
  SKIP_WITHOUT_GPU();
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  GradSet g;
  make_mixed_set(rng, g);
  std::vector<gpu::GradTensorDesc> descs = g.descs();
  int64_t tiles = 0;
  auto table = upload_table(descs, &tiles);
  EXPECT_EQ(tiles, 0 + 1 + 1 + 0 + 1 + 2 + 4 + 13 + 2 + 9 + 0);
  EXPECT_EQ(descs[6].vector_ok, 0);
  EXPECT_EQ(descs[5].vector_ok, 1);

  const float scale_host = 3000.0f;  // not a power of two: the multiply rounds
  DeviceBuffer scale(4), found(4);
  scale.put(scale_host);
  DeviceBuffer counts(descs.size() * 8, 0x7F);  // poisoned: the launch must zero them

  std::vector<HostGrad> hg = g.host_grads();
  const UnscaleCheckResult ref = unscale_and_check_reference(hg, inverse_scale(scale_host));

  ASSERT_EQ(gpu::unscale_and_check(table->as<gpu::GradTensorDesc>(), static_cast<int>(descs.size()), tiles,
                                   scale.as<float>(), nullptr, found.as<float>(), counts.as<int64_t>(), nullptr),
            "");
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expect_matches_reference(g);
  EXPECT_EQ(counts.download<int64_t>(), ref.nonfinite);
  EXPECT_EQ(found.get<float>(), 1.0f);
}

TEST(LossScalerGpu, CheckOnlyLeavesDataUntouchedAndExplicitInverseWorks) {
  SKIP_WITHOUT_GPU();
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  GradSet g;
  g.add(rng, GradDType::kFloat32, 8192 * 3, 0, 0);
  g.add(rng, GradDType::kBFloat16, 12345, 0, 0);
  std::vector<gpu::GradTensorDesc> descs = g.descs();
  int64_t tiles = 0;
  auto table = upload_table(descs, &tiles);
  DeviceBuffer found(4), counts(descs.size() * 8, 0x7F);

  // No scale at all: check only. All finite: found_inf stays 0, data bit-identical.
  ASSERT_EQ(gpu::unscale_and_check(table->as<gpu::GradTensorDesc>(), 2, tiles, nullptr, nullptr, found.as<float>(),
                                   counts.as<int64_t>(), nullptr),
            "");
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expect_matches_reference(g);  // host copy is unchanged
  EXPECT_EQ(found.get<float>(), 0.0f);
  EXPECT_EQ(counts.download<int64_t>(), (std::vector<int64_t>{0, 0}));

  // An explicit inverse scale (torch's convention) is used as given.
  const float inv = 0.125f;
  DeviceBuffer dinv(4);
  dinv.put(inv);
  std::vector<HostGrad> hg = g.host_grads();
  unscale_and_check_reference(hg, inv);
  ASSERT_EQ(gpu::unscale_and_check(table->as<gpu::GradTensorDesc>(), 2, tiles, nullptr, dinv.as<float>(),
                                   found.as<float>(), counts.as<int64_t>(), nullptr),
            "");
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expect_matches_reference(g);
}

TEST(LossScalerGpu, ScaleUpdateFollowsReferenceInAReplayedGraph) {
  SKIP_WITHOUT_GPU();
  // found_inf pattern over 40 steps with interval 3: growth, backoff, and a
  // scale that starts near the fp32 limit so growth is refused at least once.
  std::vector<float> pattern;
  for (int i = 0; i < 40; ++i) pattern.push_back(i % 7 == 5 || i == 20 || i == 21 ? 1.0f : 0.0f);
  const float start = std::ldexp(1.0f, 126);
  ScaleState ref{start, 0};

  DeviceBuffer scale_buf(4), tracker_buf(4), found_buf(4);
  scale_buf.put(start);
  float* scale = scale_buf.as<float>();
  int32_t* tracker = tracker_buf.as<int32_t>();
  float* found = found_buf.as<float>();
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  ASSERT_EQ(gpu::update_scale(scale, tracker, found, 2.0, 0.5, 3, stream), "");
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  bool refused_growth = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    ASSERT_EQ(cudaMemcpyAsync(found, &pattern[i], 4, cudaMemcpyHostToDevice, stream), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    const float before = ref.scale;
    update_scale_reference(ref, pattern[i], 2.0, 0.5, 3);
    refused_growth = refused_growth || (pattern[i] == 0.0f && ref.growth_tracker == 0 && ref.scale == before);
    float s = 0;
    int32_t tr = -1;
    ASSERT_EQ(cudaMemcpyAsync(&s, scale, 4, cudaMemcpyDeviceToHost, stream), cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(&tr, tracker, 4, cudaMemcpyDeviceToHost, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    ASSERT_EQ(s, ref.scale) << "step " << i;
    ASSERT_EQ(tr, ref.growth_tracker) << "step " << i;
  }
  EXPECT_TRUE(refused_growth);  // the fp32 limit was reached at least once
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

TEST(LossScalerGpu, PlanRejectsBadTensorsByIndex) {
  SKIP_WITHOUT_GPU();
  int64_t tiles = 0;
  DeviceBuffer buf(16 * 4);
  float* p = buf.as<float>();
  std::vector<gpu::GradTensorDesc> d(2);
  d[0] = {p, 4, 0, 0, 0};
  d[1] = {p, -1, 0, 0, 0};
  EXPECT_NE(gpu::plan_grad_tensors(d, &tiles).find("tensor 1"), std::string::npos);
  d[1] = {nullptr, 3, 0, 0, 0};
  EXPECT_NE(gpu::plan_grad_tensors(d, &tiles).find("null"), std::string::npos);
  d[1] = {p, 3, 0, 5, 0};
  EXPECT_NE(gpu::plan_grad_tensors(d, &tiles).find("dtype"), std::string::npos);
  d[1] = {reinterpret_cast<char*>(p) + 2, 3, 0, 0, 0};  // fp32 at a 2-byte offset
  EXPECT_NE(gpu::plan_grad_tensors(d, &tiles).find("aligned"), std::string::npos);
  d[1] = {reinterpret_cast<char*>(p) + 2, 3, 0, 2, 0};  // bf16 there is fine
  EXPECT_EQ(gpu::plan_grad_tensors(d, &tiles), "");
  EXPECT_EQ(tiles, 2);
  // No tensors: nothing launched, nothing to fail.
  EXPECT_EQ(gpu::unscale_and_check(nullptr, 0, 0, nullptr, nullptr, nullptr, nullptr, nullptr), "");
  EXPECT_NE(gpu::update_scale(nullptr, nullptr, nullptr, 2.0, 0.5, 3, nullptr), "");
}
#endif

}  // namespace
}  // namespace stepscope::kernels
