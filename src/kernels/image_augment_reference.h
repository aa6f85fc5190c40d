// CPU reference of the fused image augmentation (issue #31 item 3): the
// oracle the CUDA kernels (gpu/image_augment.cu) are tested against. The op
// is defined in image_augment_pixel.h; the parameters in
// image_augment_params.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/image_augment_check.h"
#include "kernels/image_augment_params.h"
#include "kernels/image_augment_pixel.h"

namespace stepscope::kernels::augment {

// check_augment (image_augment_check.h) of a vector of images.
std::string check_augment(const std::vector<ImageView>& images, const AugmentConfig& c);

// draw_params for each image (sample i of the batch is sample `first + i` of the seed's stream).
std::vector<AugmentParams> draw_batch_params(const std::vector<ImageView>& images, const AugmentConfig& c,
                                             uint64_t seed, uint64_t first = 0);

// Each contrast mean: the mean over the output image of gray() of the
// pixels after the ops before contrast (0 where the contrast factor is 1).
// Summed in double.
std::vector<float> contrast_means_reference(const std::vector<ImageView>& images,
                                            const std::vector<AugmentParams>& params, const AugmentConfig& c);

// The augmented batch before normalization: float [N, out_h, out_w, 3] in [0, 1].
std::vector<float> augment_unnormalized_reference(const std::vector<ImageView>& images,
                                                  const std::vector<AugmentParams>& params, const AugmentConfig& c);

// The whole op: bf16 bit patterns [N, out_h, out_w, 3]. Throws
// std::invalid_argument with check_augment's sentence, or when params and
// images differ in number or a box lies outside its image.
std::vector<uint16_t> augment_reference(const std::vector<ImageView>& images,
                                        const std::vector<AugmentParams>& params, const AugmentConfig& c);

}  // namespace stepscope::kernels::augment
