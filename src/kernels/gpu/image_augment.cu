// Fused image augmentation kernels (v1; see image_augment.h for the list).
// Every value is computed by the shared per-pixel code of
// kernels/image_augment_pixel.h, so a pixel differs from the CPU reference
// only where the contrast mean (summed here in fp32 per tile, then in double
// over tiles; in double throughout there) differs in its last bits.
#include "kernels/gpu/image_augment.h"

#include <cuda_bf16.h>


#include "kernels/gpu/launch_error.cuh"
#include "kernels/image_augment_check.h"

namespace stepscope::kernels::gpu {
namespace {

using augment::AugmentConfig;
using augment::AugmentParams;
using augment::ImageView;

constexpr int kThreads = 256;
constexpr int kPixelsPerThread = 8;  // stats: output pixels summed by one thread
constexpr int kTilePixels = kThreads * kPixelsPerThread;

int tiles_of(const AugmentConfig& c) {
  const int64_t pixels = static_cast<int64_t>(c.out_h) * c.out_w;
  return static_cast<int>((pixels + kTilePixels - 1) / kTilePixels);
}

__global__ void draw_kernel(const ImageView* images, int n, AugmentConfig c, uint64_t seed, uint64_t first,
                            AugmentParams* params) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  params[i] = augment::draw_params(c, seed, first + i, images[i].height, images[i].width);
}

// partial[sample * tiles + tile]: the sum of gray() before contrast over the tile's pixels.
__global__ void __launch_bounds__(kThreads) stats_kernel(const ImageView* images, const AugmentParams* params,
                                                         AugmentConfig c, int tiles, float* partial) {
  const int sample = blockIdx.y, tile = blockIdx.x;
  const AugmentParams p = params[sample];
  if (p.contrast == 1.0f) {  // no contrast op: no mean needed
    if (threadIdx.x == 0) partial[sample * tiles + tile] = 0.0f;
    return;
  }
  const ImageView img = images[sample];
  const int before = augment::contrast_position(p);
  const int64_t pixels = static_cast<int64_t>(c.out_h) * c.out_w;
  float sum = 0.0f;
  for (int k = 0; k < kPixelsPerThread; ++k) {
    const int64_t px = static_cast<int64_t>(tile) * kTilePixels + k * kThreads + threadIdx.x;
    if (px >= pixels) break;
    float rgb[3];
    augment::sample_rgb(img, p, c.out_h, c.out_w, static_cast<int32_t>(px / c.out_w),
                        static_cast<int32_t>(px % c.out_w), rgb);
    augment::color_ops(rgb, p, 0, before, 0.0f);
    sum += augment::gray(rgb[0], rgb[1], rgb[2]);
  }
  for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  __shared__ float warp_sums[kThreads / 32];
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int w = 0; w < kThreads / 32; ++w) total += warp_sums[w];
    partial[sample * tiles + tile] = total;
  }
}

__global__ void __launch_bounds__(kThreads) apply_kernel(const ImageView* images, const AugmentParams* params,
                                                         AugmentConfig c, int tiles, const float* partial,
                                                         __nv_bfloat16* out) {
  const int sample = blockIdx.y;
  const int64_t pixels = static_cast<int64_t>(c.out_h) * c.out_w;
  const int64_t px = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  __shared__ float mean;
  const AugmentParams p = params[sample];
  if (threadIdx.x == 0) {
    double sum = 0.0;  // the tiles in order: the same mean on every run
    if (p.contrast != 1.0f)
      for (int t = 0; t < tiles; ++t) sum += partial[sample * tiles + t];
    mean = static_cast<float>(sum / static_cast<double>(pixels));
  }
  __syncthreads();
  if (px >= pixels) return;
  float rgb[3];
  augment::sample_rgb(images[sample], p, c.out_h, c.out_w, static_cast<int32_t>(px / c.out_w),
                      static_cast<int32_t>(px % c.out_w), rgb);
  augment::color_ops(rgb, p, 0, 3, mean);
  __nv_bfloat16* o = out + (static_cast<int64_t>(sample) * pixels + px) * 3;
  for (int ch = 0; ch < 3; ++ch) o[ch] = __float2bfloat16_rn((rgb[ch] - c.mean[ch]) / c.std[ch]);
}

std::string check(const ImageView* images_host, const ImageView* images_device, int n, const AugmentConfig& c) {
  if (n <= 0) return "image_augment: the batch has no image";
  if (images_host == nullptr || images_device == nullptr) return "image_augment: null image table";
  const std::string e = augment::check_augment(images_host, static_cast<size_t>(n), c);
  return e.empty() ? "" : "image_augment: " + e;
}

}  // namespace

size_t augment_workspace_bytes(int n, const AugmentConfig& c) {
  return n <= 0 ? 0 : static_cast<size_t>(n) * static_cast<size_t>(tiles_of(c)) * sizeof(float);
}

std::string augment_draw(const ImageView* images_host, const ImageView* images_device, int n, const AugmentConfig& c,
                         uint64_t seed, uint64_t first, AugmentParams* params, cudaStream_t stream) {
  if (std::string e = check(images_host, images_device, n, c); !e.empty()) return e;
  if (params == nullptr) return "image_augment: null params";
  draw_kernel<<<(n + 127) / 128, 128, 0, stream>>>(images_device, n, c, seed, first, params);
  return launch_error("image_augment draw");
}

std::string augment_apply(const ImageView* images_host, const ImageView* images_device, int n,
                          const AugmentParams* params, const AugmentConfig& c, void* workspace, uint16_t* out,
                          cudaStream_t stream) {
  if (std::string e = check(images_host, images_device, n, c); !e.empty()) return e;
  if (params == nullptr || workspace == nullptr || out == nullptr) return "image_augment: null params, workspace or out";
  if (n > 65535) return "image_augment: at most 65,535 images per call";
  const int tiles = tiles_of(c);
  const int64_t pixels = static_cast<int64_t>(c.out_h) * c.out_w;
  auto* partial = static_cast<float*>(workspace);
  stats_kernel<<<dim3(tiles, n), kThreads, 0, stream>>>(images_device, params, c, tiles, partial);
  if (std::string e = launch_error("image_augment stats"); !e.empty()) return e;
  apply_kernel<<<dim3(static_cast<unsigned>((pixels + kThreads - 1) / kThreads), n), kThreads, 0, stream>>>(
      images_device, params, c, tiles, partial, reinterpret_cast<__nv_bfloat16*>(out));
  return launch_error("image_augment apply");
}

}  // namespace stepscope::kernels::gpu
