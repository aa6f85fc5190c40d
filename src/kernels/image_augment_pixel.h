// The per-pixel arithmetic of the fused image augmentation (issue #31 item
// 3), shared by the CPU reference (image_augment_reference.cpp) and the CUDA
// kernels (gpu/image_augment.cu). It defines the op, following torchvision's
// functional ops on float images in [0, 1]:
//
//   resized crop  the crop box of AugmentParams resized to out_h x out_w by
//                 bilinear interpolation as torch's upsample_bilinear2d with
//                 align_corners=False and no antialias (src = (o + 0.5) *
//                 in / out - 0.5, clamped at 0); samples are uint8 / 255
//   flip          the output row mirrored (x -> out_w - 1 - x)
//   brightness    clamp(b * x, 0, 1)
//   contrast      clamp(c * x + (1 - c) * m, 0, 1), m the mean over the
//                 image of the grayscale of its state before this op
//   saturation    clamp(s * x + (1 - s) * gray(x), 0, 1), per pixel
//   normalize     (x - mean) / std per channel, rounded once to bf16
//
// with gray(r, g, b) = 0.2989 r + 0.587 g + 0.114 b, the color ops in the
// order AugmentParams::order lists. Input: 3-channel uint8 images, planar
// (C, H, W: what torchvision.io.decode_jpeg returns) with any strides.
// Output: bf16 channels-last, [N, out_h, out_w, 3] in memory.
#pragma once

#include <cstdint>

#include "kernels/image_augment_params.h"

namespace stepscope::kernels::augment {

// One decoded image: 3 planes of uint8.
struct ImageView {
  const uint8_t* data = nullptr;
  int32_t height = 0, width = 0;
  int64_t channel_stride = 0, row_stride = 0;  // in bytes (elements); the column stride is 1
};

// A product rounded on its own. nvcc fuses a * b + c into one FMA (one
// rounding) unless told otherwise, the host compiler does not (the
// reference is built with -ffp-contract=off), and one rounding apart in the
// bilinear source coordinate moves a weight by up to 2^-13 at 2,000 pixels:
// on an H200 the kernel first differed from the reference by 1.4e-5 on a
// 1080 x 1920 image. Every product that feeds a sum goes through mul().
SS_IA_HD float mul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);  // never contracted into an FMA
#else
  return a * b;
#endif
}

SS_IA_HD float gray(float r, float g, float b) { return mul(0.2989f, r) + mul(0.587f, g) + mul(0.114f, b); }

SS_IA_HD float clamp01(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }

// Bilinear taps along one axis: indices into the crop and the weight of the second.
struct Tap {
  int32_t i0, i1;
  float l;
};
SS_IA_HD Tap bilinear_tap(int32_t o, int32_t in, int32_t out) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  float src = mul(scale, static_cast<float>(o) + 0.5f) - 0.5f;
  if (src < 0.0f) src = 0.0f;
  int32_t i0 = static_cast<int32_t>(src);
  if (i0 > in - 1) i0 = in - 1;
  const int32_t i1 = i0 + 1 < in ? i0 + 1 : in - 1;
  float l = src - static_cast<float>(i0);
  if (l > 1.0f) l = 1.0f;
  return {i0, i1, l};
}

// The resized, flipped crop at output pixel (oy, ox), 3 channels in [0, 1].
SS_IA_HD void sample_rgb(const ImageView& img, const AugmentParams& p, int32_t out_h, int32_t out_w, int32_t oy,
                         int32_t ox, float rgb[3]) {
  const Tap ty = bilinear_tap(oy, p.height, out_h);
  const Tap tx = bilinear_tap(p.flip ? out_w - 1 - ox : ox, p.width, out_w);
  const int64_t r0 = static_cast<int64_t>(p.top + ty.i0) * img.row_stride,
                r1 = static_cast<int64_t>(p.top + ty.i1) * img.row_stride;
  const int64_t c0 = p.left + tx.i0, c1 = p.left + tx.i1;
  const float h1 = ty.l, h0 = 1.0f - h1, w1 = tx.l, w0 = 1.0f - w1;
  for (int ch = 0; ch < 3; ++ch) {
    const uint8_t* plane = img.data + ch * img.channel_stride;
    const float a = plane[r0 + c0] * (1.0f / 255.0f), b = plane[r0 + c1] * (1.0f / 255.0f);
    const float c = plane[r1 + c0] * (1.0f / 255.0f), d = plane[r1 + c1] * (1.0f / 255.0f);
    rgb[ch] = mul(h0, mul(w0, a) + mul(w1, b)) + mul(h1, mul(w0, c) + mul(w1, d));
  }
}

SS_IA_HD void blend(float rgb[3], float f, float o0, float o1, float o2) {
  const float g = 1.0f - f;
  rgb[0] = clamp01(mul(f, rgb[0]) + mul(g, o0));
  rgb[1] = clamp01(mul(f, rgb[1]) + mul(g, o1));
  rgb[2] = clamp01(mul(f, rgb[2]) + mul(g, o2));
}

// The color ops of `p` in its order, from position `from` up to (not
// including) `to`; `contrast_mean` is used when contrast is among them.
SS_IA_HD void color_ops(float rgb[3], const AugmentParams& p, int from, int to, float contrast_mean) {
  for (int k = from; k < to; ++k) {
    switch (p.order[k]) {
      case kBrightness:
        if (p.brightness != 1.0f) blend(rgb, p.brightness, 0.0f, 0.0f, 0.0f);
        break;
      case kContrast:
        if (p.contrast != 1.0f) blend(rgb, p.contrast, contrast_mean, contrast_mean, contrast_mean);
        break;
      default: {
        if (p.saturation == 1.0f) break;
        const float gr = gray(rgb[0], rgb[1], rgb[2]);
        blend(rgb, p.saturation, gr, gr, gr);
      }
    }
  }
}

// Where contrast sits in the order (0-2).
SS_IA_HD int contrast_position(const AugmentParams& p) {
  return p.order[0] == kContrast ? 0 : (p.order[1] == kContrast ? 1 : 2);
}

}  // namespace stepscope::kernels::augment
