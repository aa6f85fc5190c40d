// CUDA kernels of the fused image augmentation (issue #31 item 3), raw-pointer
// API free of torch: linked into stepscope_kernels_gpu (tests) and compiled
// into the torch extension (python/stepscope_kernels). The op is defined by
// kernels/image_augment_pixel.h and its CPU reference
// kernels/image_augment_reference.h; the draws by kernels/image_augment_params.h.
//
// Kernels (numbered as they were written; the fastest is the default):
//   v1  draw: one thread per sample.
//       stats: per sample, tiles of 2,048 output pixels (256 threads x 8),
//       each the sum of gray() before contrast, written per tile (no atomics:
//       the mean is summed in a fixed order, so the output is the same on
//       every run).
//       apply: one thread per output pixel, 4 bilinear taps x 3 planes read
//       through the cache, the color ops, normalize, 3 bf16 written.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/image_augment_params.h"
#include "kernels/image_augment_pixel.h"

namespace stepscope::kernels::gpu {

// Bytes of device workspace augment_apply needs for n samples.
size_t augment_workspace_bytes(int n, const augment::AugmentConfig& c);

// Draws the parameters of samples first .. first + n - 1 of `seed` on the GPU
// into params (device, n entries). images_host: the n images (their sizes are
// read on the host); images_device: the same table in device memory.
std::string augment_draw(const augment::ImageView* images_host, const augment::ImageView* images_device, int n,
                         const augment::AugmentConfig& c, uint64_t seed, uint64_t first, augment::AugmentParams* params,
                         cudaStream_t stream);

// The augmented batch: out is bf16 bit patterns [n, out_h, out_w, 3] on the
// device; workspace holds augment_workspace_bytes(n, c). params (device) must
// hold boxes inside their images: augment_draw's are; the caller checks any
// other (the torch front does, on the host). Returns "" or why nothing was
// launched (check_augment's sentence, a null pointer) or the launch error.
std::string augment_apply(const augment::ImageView* images_host, const augment::ImageView* images_device, int n,
                          const augment::AugmentParams* params, const augment::AugmentConfig& c, void* workspace,
                          uint16_t* out, cudaStream_t stream);

}  // namespace stepscope::kernels::gpu
