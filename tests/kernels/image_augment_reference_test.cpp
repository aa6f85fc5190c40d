// The CPU reference of the fused image augmentation (issue #31 item 3), op by
// op: Philox's published answers, the parameter draws' ranges and rates, the
// bilinear resize on images whose answer is known, each color op against its
// formula, and the arguments refused. The GPU kernels are tested against this
// reference on the H200 (image_augment_gpu_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernels/bf16.h"
#include "kernels/image_augment_reference.h"

namespace stepscope::kernels::augment {
namespace {

// A planar RGB image with its own storage.
struct Image {
  std::vector<uint8_t> bytes;
  ImageView view;
  Image(int32_t h, int32_t w) : bytes(static_cast<size_t>(3) * h * w) {
    view = {bytes.data(), h, w, static_cast<int64_t>(h) * w, w};
  }
  uint8_t& at(int ch, int y, int x) { return bytes[static_cast<size_t>(ch) * view.channel_stride + y * view.row_stride + x]; }
};

Image random_image(std::mt19937& rng, int32_t h, int32_t w) {
  Image im(h, w);
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : im.bytes) b = static_cast<uint8_t>(byte(rng));
  im.view.data = im.bytes.data();
  return im;
}

AugmentParams box(int32_t top, int32_t left, int32_t h, int32_t w) {
  AugmentParams p;
  p.top = top, p.left = left, p.height = h, p.width = w;
  return p;
}

TEST(ImageAugmentReference, PhiloxKnownAnswers) {
  // Random123's kat_vectors (counter, key, expected).
  const Philox4 a = philox4x32_10(0, 0, 0, 0, 0);
  EXPECT_EQ(std::vector<uint32_t>(a.v, a.v + 4), (std::vector<uint32_t>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  const Philox4 b = philox4x32_10(~0u, ~0u, ~0u, ~0u, ~0ull);
  EXPECT_EQ(std::vector<uint32_t>(b.v, b.v + 4), (std::vector<uint32_t>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  const Philox4 c = philox4x32_10(0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0x299f31d0a4093822ull);
  EXPECT_EQ(std::vector<uint32_t>(c.v, c.v + 4), (std::vector<uint32_t>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(ImageAugmentReference, DrawsFollowTorchvisionsRangesAndRates) {
  AugmentConfig c;
  c.brightness = 0.4f, c.contrast = 0.4f, c.saturation = 1.5f;
  const int n = 20000;
  int flips = 0;
  std::map<std::vector<int>, int> orders;
  for (int i = 0; i < n; ++i) {
    const AugmentParams p = draw_params(c, 7, static_cast<uint64_t>(i), 375, 500);
    ASSERT_GE(p.top, 0);
    ASSERT_GE(p.left, 0);
    ASSERT_LE(p.top + p.height, 375);
    ASSERT_LE(p.left + p.width, 500);
    const double share = static_cast<double>(p.height) * p.width / (375.0 * 500.0);
    // Rounding w and h moves the area by at most about (w + h) / 2 pixels.
    const double slack = (p.height + p.width) / (375.0 * 500.0);
    EXPECT_GE(share, 0.08 - slack);
    const double aspect = static_cast<double>(p.width) / p.height;
    EXPECT_GE(aspect, 0.75 * (1 - 1.0 / p.height) - 1.0 / p.height);
    EXPECT_LE(aspect, 4.0 / 3.0 * (1 + 1.0 / p.height) + 1.0 / p.height);
    EXPECT_GE(p.brightness, 0.6f);
    EXPECT_LE(p.brightness, 1.4f);
    EXPECT_GE(p.saturation, 0.0f);  // strength above 1: U(0, 1 + s)
    EXPECT_LE(p.saturation, 2.5f);
    flips += p.flip;
    ++orders[{p.order[0], p.order[1], p.order[2]}];
  }
  // Rates within 5 standard deviations of the binomial.
  EXPECT_NEAR(flips, n / 2, 5 * std::sqrt(n * 0.25));
  ASSERT_EQ(orders.size(), 6u);
  for (const auto& [order, count] : orders) EXPECT_NEAR(count, n / 6.0, 5 * std::sqrt(n * (1 / 6.0) * (5 / 6.0)));
  // The same (seed, sample) draws the same; another seed draws otherwise.
  const AugmentParams x = draw_params(c, 7, 123, 375, 500), y = draw_params(c, 7, 123, 375, 500),
                      z = draw_params(c, 8, 123, 375, 500);
  EXPECT_EQ(std::tie(x.top, x.left, x.height, x.width, x.brightness), std::tie(y.top, y.left, y.height, y.width, y.brightness));
  EXPECT_NE(std::tie(x.top, x.left, x.height, x.width, x.brightness), std::tie(z.top, z.left, z.height, z.width, z.brightness));
  // Jitter off: factors exactly 1.
  const AugmentParams off = draw_params(AugmentConfig{}, 1, 0, 100, 100);
  EXPECT_EQ(off.brightness, 1.0f);
  EXPECT_EQ(off.contrast, 1.0f);
  EXPECT_EQ(off.saturation, 1.0f);
}

TEST(ImageAugmentReference, FallbackCropOfAnExtremeImage) {
  // 4 x 1000: no draw of area >= 8% with aspect <= 4/3 fits a height of 4, so
  // torchvision's fallback applies: full height, width clamped to 4/3 of it,
  // centred.
  AugmentConfig c;
  const AugmentParams p = draw_params(c, 3, 0, 4, 1000);
  EXPECT_EQ(p.height, 4);
  EXPECT_EQ(p.width, 5);  // rint(4 * 4/3)
  EXPECT_EQ(p.top, 0);
  EXPECT_EQ(p.left, (1000 - 5) / 2);
}

TEST(ImageAugmentReference, BilinearTapsMatchTorchsRule) {
  // The same size: the identity.
  for (int o = 0; o < 7; ++o) {
    const Tap t = bilinear_tap(o, 7, 7);
    EXPECT_EQ(t.i0, o);
    EXPECT_EQ(t.l, 0.0f);
  }
  // Halving: (o + 0.5) * 2 - 0.5 = 2o + 0.5, halfway between 2o and 2o + 1.
  const Tap h = bilinear_tap(1, 4, 2);
  EXPECT_EQ(h.i0, 2);
  EXPECT_EQ(h.i1, 3);
  EXPECT_EQ(h.l, 0.5f);
  // Upscaling: the first output's source is below 0 and clamped; the last clamps its second tap.
  const Tap first = bilinear_tap(0, 2, 8), last = bilinear_tap(7, 2, 8);
  EXPECT_EQ(first.i0, 0);
  EXPECT_EQ(first.l, 0.0f);
  EXPECT_EQ(last.i0, 1);
  EXPECT_EQ(last.i1, 1);
}

TEST(ImageAugmentReference, ResizeOfKnownImages) {
  AugmentConfig c;
  c.out_h = 6, c.out_w = 9;
  // A crop of the output's size is copied exactly (values / 255), and flipped exactly.
  std::mt19937 rng(11);
  Image im = random_image(rng, 20, 30);
  AugmentParams p = box(3, 5, 6, 9);
  std::vector<float> out = augment_unnormalized_reference({im.view}, {p}, c);
  for (int y = 0; y < 6; ++y)
    for (int x = 0; x < 9; ++x)
      for (int ch = 0; ch < 3; ++ch)
        ASSERT_EQ(out[(y * 9 + x) * 3 + ch], im.at(ch, 3 + y, 5 + x) * (1.0f / 255.0f));
  p.flip = 1;
  std::vector<float> flipped = augment_unnormalized_reference({im.view}, {p}, c);
  for (int y = 0; y < 6; ++y)
    for (int x = 0; x < 9; ++x)
      for (int ch = 0; ch < 3; ++ch) ASSERT_EQ(flipped[(y * 9 + x) * 3 + ch], out[(y * 9 + (8 - x)) * 3 + ch]);
  // Bilinear interpolation is exact on a linear ramp away from the clamped
  // border: value = 2 * x + y in a 100 x 100 image, resized from a 40 x 60 crop to 20 x 30.
  Image ramp(100, 100);
  for (int ch = 0; ch < 3; ++ch)
    for (int y = 0; y < 100; ++y)
      for (int x = 0; x < 100; ++x) ramp.at(ch, y, x) = static_cast<uint8_t>((2 * x + y) / 2);
  for (int y = 0; y < 100; ++y)
    for (int x = 0; x < 100; ++x) ramp.at(0, y, x) = static_cast<uint8_t>(x + y);
  c.out_h = 20, c.out_w = 30;
  const AugmentParams q = box(10, 20, 40, 60);
  out = augment_unnormalized_reference({ramp.view}, {q}, c);
  for (int y = 1; y < 19; ++y)
    for (int x = 1; x < 29; ++x) {
      const double sy = 10 + (y + 0.5) * 2 - 0.5, sx = 20 + (x + 0.5) * 2 - 0.5;
      ASSERT_NEAR(out[(y * 30 + x) * 3 + 0], (sx + sy) / 255.0, 1e-5) << y << "," << x;
    }
  // A constant image stays constant.
  Image flat(13, 17);
  std::fill(flat.bytes.begin(), flat.bytes.end(), 77);
  c.out_h = 31, c.out_w = 5;
  for (float v : augment_unnormalized_reference({flat.view}, {box(2, 3, 9, 11)}, c)) ASSERT_NEAR(v, 77 / 255.0f, 1e-6f);
}

TEST(ImageAugmentReference, ColorOpsFollowTheirFormulas) {
  std::mt19937 rng(5);
  Image im = random_image(rng, 16, 16);
  AugmentConfig c;
  c.out_h = 16, c.out_w = 16;
  const AugmentParams plain = box(0, 0, 16, 16);
  const std::vector<float> x = augment_unnormalized_reference({im.view}, {plain}, c);
  auto with = [&](float b, float ct, float s, std::vector<uint8_t> order) {
    AugmentParams p = plain;
    p.brightness = b, p.contrast = ct, p.saturation = s;
    for (int k = 0; k < 3; ++k) p.order[k] = order[k];
    return augment_unnormalized_reference({im.view}, {p}, c);
  };
  // Brightness 1.7: clamp(1.7 x).
  std::vector<float> y = with(1.7f, 1, 1, {0, 1, 2});
  for (size_t k = 0; k < x.size(); ++k) ASSERT_EQ(y[k], std::min(1.0f, 1.7f * x[k] + (1.0f - 1.7f) * 0.0f));
  // Saturation 0: every pixel its grayscale in all three channels.
  y = with(1, 1, 0.0f, {0, 1, 2});
  for (size_t k = 0; k < x.size(); k += 3) {
    const float g = gray(x[k], x[k + 1], x[k + 2]);
    for (int ch = 0; ch < 3; ++ch) ASSERT_NEAR(y[k + ch], g, 1e-7f);
  }
  // Contrast 0: the image's mean grayscale everywhere, after the ops before
  // it: brightness 1.5 first (clamped), then contrast.
  double sum = 0;
  for (size_t k = 0; k < x.size(); k += 3) {
    float p[3] = {std::min(1.0f, 1.5f * x[k]), std::min(1.0f, 1.5f * x[k + 1]), std::min(1.0f, 1.5f * x[k + 2])};
    sum += gray(p[0], p[1], p[2]);
  }
  const float mean = static_cast<float>(sum / 256);
  AugmentParams bc = plain;
  bc.brightness = 1.5f, bc.contrast = 0.0f;
  bc.order[0] = kBrightness, bc.order[1] = kContrast, bc.order[2] = kSaturation;
  EXPECT_EQ(contrast_means_reference({im.view}, {bc}, c)[0], mean);
  y = with(1.5f, 0.0f, 1, {0, 1, 2});
  for (float v : y) ASSERT_NEAR(v, mean, 1e-7f);
  // Contrast first, brightness after: a different image (the clamp does not commute).
  EXPECT_NE(with(1.5f, 0.5f, 1, {1, 0, 2}), with(1.5f, 0.5f, 1, {0, 1, 2}));
  // Normalization and bf16: the whole op rounds (x - mean) / std once.
  AugmentParams all = plain;
  all.brightness = 1.2f, all.contrast = 0.7f, all.saturation = 1.3f;
  const std::vector<float> un = augment_unnormalized_reference({im.view}, {all}, c);
  const std::vector<uint16_t> out = augment_reference({im.view}, {all}, c);
  for (size_t k = 0; k < un.size(); ++k)
    ASSERT_EQ(out[k], float_to_bf16_rne((un[k] - c.mean[k % 3]) / c.std[k % 3]));
}

TEST(ImageAugmentReference, RefusesBadArguments) {
  std::mt19937 rng(1);
  Image im = random_image(rng, 8, 8);
  AugmentConfig c;
  EXPECT_EQ(check_augment({}, c), "the batch has no image");
  ImageView zero = im.view;
  zero.width = 0;
  EXPECT_NE(check_augment({im.view, zero}, c).find("image 1 is 8x0: zero-size"), std::string::npos);
  ImageView overlap = im.view;
  overlap.channel_stride = 10;
  EXPECT_NE(check_augment({overlap}, c).find("overlap"), std::string::npos);
  AugmentConfig bad = c;
  bad.out_h = 0;
  EXPECT_NE(check_augment({im.view}, bad).find("output size"), std::string::npos);
  bad = c;
  bad.scale_lo = 0.5f, bad.scale_hi = 0.1f;
  EXPECT_NE(check_augment({im.view}, bad).find("scale"), std::string::npos);
  bad = c;
  bad.std[2] = 0;
  EXPECT_NE(check_augment({im.view}, bad).find("channel 2"), std::string::npos);
  bad = c;
  bad.saturation = -1;
  EXPECT_NE(check_augment({im.view}, bad).find("saturation"), std::string::npos);
  bad = c;
  bad.flip_p = 2;
  EXPECT_NE(check_augment({im.view}, bad).find("flip_p"), std::string::npos);
  EXPECT_THROW(augment_reference({im.view}, {box(4, 4, 5, 5)}, c), std::invalid_argument);  // box past the edge
  EXPECT_THROW(augment_reference({im.view}, {}, c), std::invalid_argument);                 // no params
}

}  // namespace
}  // namespace stepscope::kernels::augment
