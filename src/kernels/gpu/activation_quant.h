// CUDA kernels of block-wise activation compression (issue #6 item 2), with a
// raw-pointer launch API free of torch: linked into stepscope_kernels_gpu
// (tests) and compiled into the torch extension (python/stepscope_kernels).
// The format is defined in kernels/activation_quant_format.h; the CPU
// reference is kernels/activation_quant_reference.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace stepscope::kernels::gpu {

enum class ActDType : int { kFloat32 = 0, kFloat16 = 1, kBFloat16 = 2 };

// x: numel contiguous values of `dtype` on the device. Writes
// ceil(numel * bits / 8) code bytes and ceil(numel / block) bf16 bit patterns
// to scale and zero. Returns "" on success, otherwise why nothing was launched
// (bad argument) or the CUDA launch error.
std::string act_quantize(const void* x, ActDType dtype, int64_t numel, int bits, int block, bool stochastic,
                         uint64_t seed, uint8_t* codes, uint16_t* scale, uint16_t* zero, cudaStream_t stream);

// Inverse: writes numel values of out_dtype to out.
std::string act_dequantize(const uint8_t* codes, const uint16_t* scale, const uint16_t* zero, int64_t numel,
                           int bits, int block, ActDType out_dtype, void* out, cudaStream_t stream);

}  // namespace stepscope::kernels::gpu
