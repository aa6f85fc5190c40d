// The fused image augmentation's CUDA kernels against the CPU reference on
// fresh random images of odd sizes: the draws equal the reference's (crop
// boxes, flips and orders exactly, factors to the last bit or one ulp), and
// every output value is the reference's bf16 or one bf16 step away (the
// contrast mean is summed in another order), nearly all equal. The output is
// poisoned first, so a value the kernel never writes fails. Skips without a
// GPU (CI) or without the CUDA build.
#include <gtest/gtest.h>

#ifdef STEPSCOPE_HAVE_KERNELS_GPU
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "gpu_skip.h"
#include "kernels/bf16.h"
#include "kernels/device_buffer.h"
#include "kernels/gpu/image_augment.h"
#include "kernels/image_augment_reference.h"
#endif

namespace stepscope::kernels::augment {
namespace {

#ifdef STEPSCOPE_HAVE_KERNELS_GPU
using testing::DeviceBuffer;

struct Batch {
  std::vector<std::vector<uint8_t>> host;                  // planar images
  std::vector<std::unique_ptr<DeviceBuffer>> device;
  std::vector<ImageView> host_views, device_views;         // host data / device data
};

Batch make_batch(std::mt19937& rng, const std::vector<std::pair<int, int>>& sizes) {
  Batch b;
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto [h, w] : sizes) {
    std::vector<uint8_t> img(static_cast<size_t>(3) * h * w);
    for (auto& v : img) v = static_cast<uint8_t>(byte(rng));
    auto buf = std::make_unique<DeviceBuffer>(img.size());
    buf->upload(img.data());
    const ImageView hv{nullptr, h, w, static_cast<int64_t>(h) * w, w};
    ImageView dv = hv;
    dv.data = buf->as<uint8_t>();
    b.host.push_back(std::move(img));
    b.host_views.push_back(hv);
    b.device_views.push_back(dv);
    b.device.push_back(std::move(buf));
  }
  for (size_t i = 0; i < b.host.size(); ++i) b.host_views[i].data = b.host[i].data();
  return b;
}

TEST(ImageAugmentGpu, MatchesTheReferenceOnFreshRandomImages) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(std::random_device{}());
  const std::vector<std::pair<int, int>> sizes = {{375, 500}, {480, 640}, {33, 257}, {1080, 1920}, {7, 5}, {224, 224}};
  Batch b = make_batch(rng, sizes);
  AugmentConfig c;
  c.out_h = 224, c.out_w = 192;
  c.brightness = c.contrast = c.saturation = 0.4f;
  const int n = static_cast<int>(sizes.size());
  DeviceBuffer table(sizeof(ImageView) * n), params(sizeof(AugmentParams) * n),
      work(gpu::augment_workspace_bytes(n, c)), out(static_cast<size_t>(n) * c.out_h * c.out_w * 3 * 2, 0xFF);
  table.upload(b.device_views.data());
  const uint64_t seed = rng();
  ASSERT_EQ(gpu::augment_draw(b.device_views.data(), table.as<ImageView>(), n, c, seed, 17, params.as<AugmentParams>(),
                              nullptr),
            "");
  const std::vector<AugmentParams> got = params.download<AugmentParams>(n);
  const std::vector<AugmentParams> want = draw_batch_params(b.host_views, c, seed, 17);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(std::tie(got[i].top, got[i].left, got[i].height, got[i].width, got[i].flip),
              std::tie(want[i].top, want[i].left, want[i].height, want[i].width, want[i].flip))
        << "sample " << i;
    for (int k = 0; k < 3; ++k) EXPECT_EQ(got[i].order[k], want[i].order[k]);
    EXPECT_NEAR(got[i].brightness, want[i].brightness, 1e-6f);
    EXPECT_NEAR(got[i].contrast, want[i].contrast, 1e-6f);
    EXPECT_NEAR(got[i].saturation, want[i].saturation, 1e-6f);
  }
  ASSERT_EQ(gpu::augment_apply(b.device_views.data(), table.as<ImageView>(), n, params.as<AugmentParams>(), c,
                               work.ptr(), out.as<uint16_t>(), nullptr),
            "");
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<uint16_t> gpu_out = out.download<uint16_t>();
  const std::vector<uint16_t> ref = augment_reference(b.host_views, got, c);
  size_t equal = 0;
  for (size_t k = 0; k < ref.size(); ++k) {
    const float g = bf16_to_float(gpu_out[k]), r = bf16_to_float(ref[k]);
    ASSERT_TRUE(std::isfinite(g)) << "value " << k << " not written";
    // One bf16 step (2^-7 relative), or 1e-5 pixel units / std near zero.
    ASSERT_LE(std::fabs(g - r), std::fabs(r) * 0x1p-7f + 1e-5f / 0.224f) << "value " << k;
    equal += gpu_out[k] == ref[k];
  }
  EXPECT_GT(static_cast<double>(equal) / ref.size(), 0.999);
}

TEST(ImageAugmentGpu, RefusesBadArgumentsWithoutLaunching) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(3);
  Batch b = make_batch(rng, {{8, 8}});
  AugmentConfig c;
  DeviceBuffer table(sizeof(ImageView)), params(sizeof(AugmentParams)), work(gpu::augment_workspace_bytes(1, c)),
      out(static_cast<size_t>(c.out_h) * c.out_w * 6);
  table.upload(b.device_views.data());
  EXPECT_NE(gpu::augment_apply(b.device_views.data(), table.as<ImageView>(), 0, params.as<AugmentParams>(), c,
                               work.ptr(), out.as<uint16_t>(), nullptr)
                .find("no image"),
            std::string::npos);
  AugmentConfig bad = c;
  bad.std[1] = 0;
  EXPECT_NE(gpu::augment_apply(b.device_views.data(), table.as<ImageView>(), 1, params.as<AugmentParams>(), bad,
                               work.ptr(), out.as<uint16_t>(), nullptr)
                .find("channel 1"),
            std::string::npos);
  EXPECT_NE(gpu::augment_draw(b.device_views.data(), table.as<ImageView>(), 1, c, 1, 0, nullptr, nullptr), "");
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}
#endif

}  // namespace
}  // namespace stepscope::kernels::augment
