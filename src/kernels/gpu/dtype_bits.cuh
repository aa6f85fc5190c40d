// Storage <-> float for each gradient/activation dtype the kernels take:
// 16-bit types travel as raw bits, so vectors of them are trivial arrays that
// load and store as 16-byte words. Math is done in fp32; store() rounds once
// to nearest even.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace stepscope::kernels::gpu {

struct F32 {
  using Bits = float;
  static __device__ __forceinline__ float load(float b) { return b; }
  static __device__ __forceinline__ float store(float f) { return f; }
};
struct Bf16 {
  using Bits = uint16_t;
  static __device__ __forceinline__ float load(uint16_t b) { return __bfloat162float(__ushort_as_bfloat16(b)); }
  static __device__ __forceinline__ uint16_t store(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
};
struct F16 {
  using Bits = uint16_t;
  static __device__ __forceinline__ float load(uint16_t b) { return __half2float(__ushort_as_half(b)); }
  static __device__ __forceinline__ uint16_t store(float f) { return __half_as_ushort(__float2half_rn(f)); }
};

}  // namespace stepscope::kernels::gpu
