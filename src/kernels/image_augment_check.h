// The argument check of the fused image augmentation, header-only C++17 so
// the CUDA entry points (gpu/image_augment.cu), the CPU reference and the
// torch front all refuse the same inputs with the same sentence.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

#include "kernels/image_augment_params.h"
#include "kernels/image_augment_pixel.h"

namespace stepscope::kernels::augment {

// "" when the n images and the config can be augmented, else a sentence
// naming the argument: an empty batch, an image without data, of zero size
// or with strides that overlap its planes, an output size outside
// 1..16384, a scale range not within (0, 1], a ratio range that is not
// positive, a flip_p outside [0, 1], a jitter strength that is negative or
// not finite, a std of 0 or a mean/std that is not finite.
inline std::string check_augment(const ImageView* images, size_t n, const AugmentConfig& c) {
  if (n == 0) return "the batch has no image";
  for (size_t i = 0; i < n; ++i) {
    const ImageView& im = images[i];
    const std::string name = "image " + std::to_string(i);
    if (im.data == nullptr) return name + " has no data";
    if (im.height < 1 || im.width < 1)
      return name + " is " + std::to_string(im.height) + "x" + std::to_string(im.width) + ": zero-size";
    if (im.row_stride < im.width || im.channel_stride < im.row_stride * im.height)
      return name + ": strides (channel " + std::to_string(im.channel_stride) + ", row " +
             std::to_string(im.row_stride) + ") overlap a " + std::to_string(im.height) + "x" +
             std::to_string(im.width) + " plane";
  }
  if (c.out_h < 1 || c.out_w < 1 || c.out_h > 16384 || c.out_w > 16384)
    return "output size " + std::to_string(c.out_h) + "x" + std::to_string(c.out_w) + " is outside 1..16384";
  if (!(c.scale_lo > 0 && c.scale_lo <= c.scale_hi && c.scale_hi <= 1))
    return "scale (" + std::to_string(c.scale_lo) + ", " + std::to_string(c.scale_hi) + ") is not a range within (0, 1]";
  if (!(c.ratio_lo > 0 && c.ratio_lo <= c.ratio_hi && std::isfinite(c.ratio_hi)))
    return "ratio (" + std::to_string(c.ratio_lo) + ", " + std::to_string(c.ratio_hi) + ") is not a positive range";
  if (!(c.flip_p >= 0 && c.flip_p <= 1)) return "flip_p " + std::to_string(c.flip_p) + " is outside [0, 1]";
  if (!(c.brightness >= 0 && c.contrast >= 0 && c.saturation >= 0) || !std::isfinite(c.brightness) ||
      !std::isfinite(c.contrast) || !std::isfinite(c.saturation))
    return "brightness, contrast and saturation must be finite and >= 0";
  for (int ch = 0; ch < 3; ++ch)
    if (!(c.std[ch] != 0) || !std::isfinite(c.std[ch]) || !std::isfinite(c.mean[ch]))
      return "mean/std of channel " + std::to_string(ch) + ": std must be finite and non-zero, mean finite";
  return "";
}

// "" when box p lies inside image im, else a sentence naming sample i.
inline std::string check_box(const ImageView& im, const AugmentParams& p, size_t i) {
  if (p.top < 0 || p.left < 0 || p.height < 1 || p.width < 1 || p.top > im.height - p.height ||
      p.left > im.width - p.width)
    return "image " + std::to_string(i) + ": crop box (top " + std::to_string(p.top) + ", left " +
           std::to_string(p.left) + ", " + std::to_string(p.height) + "x" + std::to_string(p.width) +
           ") outside the " + std::to_string(im.height) + "x" + std::to_string(im.width) + " image";
  return "";
}

}  // namespace stepscope::kernels::augment
