// The random parameters of the fused image augmentation (issue #31 item 3),
// drawn per sample from (seed, sample index) by the same code on the CPU and
// on the GPU, so a batch's augmentation is a pure function of the seed.
//
// The draws follow torchvision's transforms:
//   RandomResizedCrop.get_params: up to 10 tries of an area share
//     U(scale) and a log-uniform aspect ratio U(log ratio); w =
//     round(sqrt(area * aspect)), h = round(sqrt(area / aspect)); the first
//     that fits is placed at top = U{0..H-h}, left = U{0..W-w}; otherwise a
//     centred crop of the whole image clamped to the ratio range.
//   RandomHorizontalFlip: flip with probability flip_p.
//   ColorJitter(brightness, contrast, saturation): each factor U(max(0, 1 - x),
//     1 + x) (1 when x is 0), applied in a random order (torchvision draws a
//     permutation of four ops, hue included; hue is not supported here).
// The uniforms come from Philox-4x32-10 (Salmon et al., "Parallel random
// numbers: as easy as 1, 2, 3", SC 2011) keyed by the seed, counter = (sample,
// draw): integer arithmetic, so both sides draw the same bits. Areas and
// ratios are computed in double, where the CPU's and the GPU's sqrt are
// correctly rounded and exp/log differ at most in the last bit, so the
// integer box agrees unless a value lands within 1e-15 of a rounding edge.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define SS_IA_HD __host__ __device__ __forceinline__
#else
#define SS_IA_HD inline
#endif

namespace stepscope::kernels::augment {

// What the user configures (torchvision's arguments of the same names).
struct AugmentConfig {
  int out_h = 224, out_w = 224;
  float scale_lo = 0.08f, scale_hi = 1.0f;          // RandomResizedCrop scale
  float ratio_lo = 3.0f / 4.0f, ratio_hi = 4.0f / 3.0f;  // RandomResizedCrop ratio
  float flip_p = 0.5f;
  float brightness = 0.0f, contrast = 0.0f, saturation = 0.0f;  // ColorJitter strengths (0: off)
  float mean[3] = {0.485f, 0.456f, 0.406f};         // Normalize (ImageNet's by default)
  float std[3] = {0.229f, 0.224f, 0.225f};
};

// The color ops, in the order `order` lists them.
enum ColorOp : uint8_t { kBrightness = 0, kContrast = 1, kSaturation = 2 };

// One sample's draw.
struct AugmentParams {
  int32_t top = 0, left = 0, height = 1, width = 1;  // the crop box in source pixels
  uint8_t flip = 0;
  uint8_t order[3] = {kBrightness, kContrast, kSaturation};
  float brightness = 1.0f, contrast = 1.0f, saturation = 1.0f;  // factors (1: identity)
};

// Philox-4x32-10: four 32-bit outputs for a 128-bit counter and a 64-bit key.
struct Philox4 {
  uint32_t v[4];
};
SS_IA_HD uint32_t mulhi32(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>((static_cast<uint64_t>(a) * b) >> 32);
}
SS_IA_HD Philox4 philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint64_t key) {
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint32_t hi0 = mulhi32(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    const uint32_t hi1 = mulhi32(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    const uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

// Uniform draws of one sample, four at a time from consecutive counters.
class SampleStream {
 public:
  SS_IA_HD SampleStream(uint64_t seed, uint64_t sample) : seed_(seed), sample_(sample) {}
  // A uniform double in [0, 1) from 53 random bits.
  SS_IA_HD double uniform() {
    const uint64_t hi = next(), lo = next();
    return static_cast<double>(((hi << 32) | lo) >> 11) * (1.0 / 9007199254740992.0);
  }
  // A uniform integer in [0, n) (n >= 1), from 64 bits (bias below 2^-32 for any n < 2^32).
  SS_IA_HD uint32_t below(uint32_t n) {
    const uint64_t hi = next(), lo = next();
    return static_cast<uint32_t>((((hi << 32) | lo) >> 32) * n >> 32);
  }

 private:
  SS_IA_HD uint32_t next() {
    if (used_ == 4) {
      buf_ = philox4x32_10(static_cast<uint32_t>(draw_), static_cast<uint32_t>(draw_ >> 32),
                           static_cast<uint32_t>(sample_), static_cast<uint32_t>(sample_ >> 32), seed_);
      ++draw_;
      used_ = 0;
    }
    return buf_.v[used_++];
  }
  uint64_t seed_, sample_, draw_ = 0;
  Philox4 buf_{};
  int used_ = 4;
};

SS_IA_HD float jitter_factor(SampleStream& rng, float strength) {
  if (strength <= 0.0f) return 1.0f;
  const double lo = strength < 1.0f ? 1.0 - strength : 0.0, hi = 1.0 + strength;
  return static_cast<float>(lo + (hi - lo) * rng.uniform());
}

// The draw of sample `sample` of an image of height h, width w (both >= 1).
SS_IA_HD AugmentParams draw_params(const AugmentConfig& c, uint64_t seed, uint64_t sample, int32_t h, int32_t w) {
  SampleStream rng(seed, sample);
  AugmentParams p;
  const double area = static_cast<double>(h) * static_cast<double>(w);
  const double log_lo = log(static_cast<double>(c.ratio_lo)), log_hi = log(static_cast<double>(c.ratio_hi));
  bool placed = false;
  for (int attempt = 0; attempt < 10 && !placed; ++attempt) {
    const double target = area * (c.scale_lo + (static_cast<double>(c.scale_hi) - c.scale_lo) * rng.uniform());
    const double aspect = exp(log_lo + (log_hi - log_lo) * rng.uniform());
    const double cw = rint(sqrt(target * aspect)), ch = rint(sqrt(target / aspect));
    if (cw > 0 && cw <= w && ch > 0 && ch <= h) {
      p.width = static_cast<int32_t>(cw);
      p.height = static_cast<int32_t>(ch);
      p.top = static_cast<int32_t>(rng.below(static_cast<uint32_t>(h - p.height + 1)));
      p.left = static_cast<int32_t>(rng.below(static_cast<uint32_t>(w - p.width + 1)));
      placed = true;
    }
  }
  if (!placed) {  // torchvision's fallback: the whole image, clamped to the ratio range, centred
    const double in_ratio = static_cast<double>(w) / static_cast<double>(h);
    if (in_ratio < c.ratio_lo) {
      p.width = w;
      p.height = static_cast<int32_t>(rint(w / static_cast<double>(c.ratio_lo)));
    } else if (in_ratio > c.ratio_hi) {
      p.height = h;
      p.width = static_cast<int32_t>(rint(h * static_cast<double>(c.ratio_hi)));
    } else {
      p.width = w;
      p.height = h;
    }
    p.height = p.height < 1 ? 1 : (p.height > h ? h : p.height);
    p.width = p.width < 1 ? 1 : (p.width > w ? w : p.width);
    p.top = (h - p.height) / 2;
    p.left = (w - p.width) / 2;
  }
  p.flip = rng.uniform() < c.flip_p ? 1 : 0;
  // The order: a uniform permutation of the three ops (Fisher-Yates).
  uint8_t order[3] = {kBrightness, kContrast, kSaturation};
  for (int i = 2; i > 0; --i) {
    const uint32_t j = rng.below(static_cast<uint32_t>(i + 1));
    const uint8_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (int i = 0; i < 3; ++i) p.order[i] = order[i];
  p.brightness = jitter_factor(rng, c.brightness);
  p.contrast = jitter_factor(rng, c.contrast);
  p.saturation = jitter_factor(rng, c.saturation);
  return p;
}

}  // namespace stepscope::kernels::augment
