#include "kernels/image_augment_reference.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/bf16.h"

namespace stepscope::kernels::augment {

std::string check_augment(const std::vector<ImageView>& images, const AugmentConfig& c) {
  return check_augment(images.data(), images.size(), c);
}

std::vector<AugmentParams> draw_batch_params(const std::vector<ImageView>& images, const AugmentConfig& c,
                                             uint64_t seed, uint64_t first) {
  std::vector<AugmentParams> out;
  out.reserve(images.size());
  for (size_t i = 0; i < images.size(); ++i)
    out.push_back(draw_params(c, seed, first + i, images[i].height, images[i].width));
  return out;
}

namespace {

void check_all(const std::vector<ImageView>& images, const std::vector<AugmentParams>& params,
               const AugmentConfig& c) {
  if (std::string e = check_augment(images, c); !e.empty()) throw std::invalid_argument(e);
  if (params.size() != images.size())
    throw std::invalid_argument(fmt::format("{} params for {} images", params.size(), images.size()));
  for (size_t i = 0; i < images.size(); ++i)
    if (std::string e = check_box(images[i], params[i], i); !e.empty()) throw std::invalid_argument(e);
}

}  // namespace

std::vector<float> contrast_means_reference(const std::vector<ImageView>& images,
                                            const std::vector<AugmentParams>& params, const AugmentConfig& c) {
  check_all(images, params, c);
  std::vector<float> means(images.size(), 0.0f);
  for (size_t i = 0; i < images.size(); ++i) {
    const AugmentParams& p = params[i];
    if (p.contrast == 1.0f) continue;
    const int before = contrast_position(p);
    double sum = 0;
    for (int32_t y = 0; y < c.out_h; ++y)
      for (int32_t x = 0; x < c.out_w; ++x) {
        float rgb[3];
        sample_rgb(images[i], p, c.out_h, c.out_w, y, x, rgb);
        color_ops(rgb, p, 0, before, 0.0f);
        sum += gray(rgb[0], rgb[1], rgb[2]);
      }
    means[i] = static_cast<float>(sum / (static_cast<double>(c.out_h) * c.out_w));
  }
  return means;
}

std::vector<float> augment_unnormalized_reference(const std::vector<ImageView>& images,
                                                  const std::vector<AugmentParams>& params, const AugmentConfig& c) {
  const std::vector<float> means = contrast_means_reference(images, params, c);
  const size_t plane = static_cast<size_t>(c.out_h) * c.out_w;
  std::vector<float> out(images.size() * plane * 3);
  for (size_t i = 0; i < images.size(); ++i)
    for (int32_t y = 0; y < c.out_h; ++y)
      for (int32_t x = 0; x < c.out_w; ++x) {
        float* px = &out[(i * plane + static_cast<size_t>(y) * c.out_w + x) * 3];
        sample_rgb(images[i], params[i], c.out_h, c.out_w, y, x, px);
        color_ops(px, params[i], 0, 3, means[i]);
      }
  return out;
}

std::vector<uint16_t> augment_reference(const std::vector<ImageView>& images,
                                        const std::vector<AugmentParams>& params, const AugmentConfig& c) {
  const std::vector<float> x = augment_unnormalized_reference(images, params, c);
  std::vector<uint16_t> out(x.size());
  for (size_t k = 0; k < x.size(); ++k) out[k] = float_to_bf16_rne((x[k] - c.mean[k % 3]) / c.std[k % 3]);
  return out;
}

}  // namespace stepscope::kernels::augment
