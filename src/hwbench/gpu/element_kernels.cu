#include "hwbench/gpu/element_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "hwbench/gpu/cuda_check.h"
#include "hwbench/random_values.h"

namespace stepscope::hwbench::gpu {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(size_t count) {
  size_t b = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b > 65535 * 16 ? 65535 * 16 : (b == 0 ? 1 : b));
}

template <class T>
__device__ T from_float(float v);
template <>
__device__ float from_float<float>(float v) { return v; }
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16(v); }
template <>
__device__ __half from_float<__half>(float v) { return __float2half(v); }
template <>
__device__ __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float v) { return __nv_fp8_e4m3(v); }

template <class T>
__device__ double to_double(T v) { return static_cast<double>(static_cast<float>(v)); }
template <>
__device__ double to_double<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <>
__device__ double to_double<__half>(__half v) { return __half2float(v); }

template <class T>
__global__ void fill_kernel(T* p, size_t count, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x)
    p[i] = from_float<T>(uniform_value(seed, i));
}

__global__ void words_kernel(uint32_t* p, size_t words, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < words; i += size_t{gridDim.x} * blockDim.x)
    p[i] = static_cast<uint32_t>(mix_bits(seed, i));
}

// One block per sample: a tree reduction over k in double.
template <class In, class Out>
__global__ void reference_kernel(const In* a, const In* b, const Out* d, int64_t m, int64_t k, const int64_t* rows,
                                 const int64_t* cols, double* ref, double* got, double* abs_sum) {
  __shared__ double sum[kThreads], mag[kThreads];
  int64_t i = rows[blockIdx.x], j = cols[blockIdx.x];
  double s = 0, g = 0;
  for (int64_t p = threadIdx.x; p < k; p += blockDim.x) {
    double x = to_double(a[p + i * k]) * to_double(b[p + j * k]);
    s += x;
    g += fabs(x);
  }
  sum[threadIdx.x] = s;
  mag[threadIdx.x] = g;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) {
      sum[threadIdx.x] += sum[threadIdx.x + w];
      mag[threadIdx.x] += mag[threadIdx.x + w];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    ref[blockIdx.x] = sum[0];
    abs_sum[blockIdx.x] = mag[0];
    got[blockIdx.x] = to_double(d[i + j * m]);
  }
}

template <class In, class Out>
void launch_reference(const void* a, const void* b, const void* d, int64_t m, int64_t k, const int64_t* rows,
                      const int64_t* cols, int samples, double* ref, double* got, double* abs_sum, cudaStream_t s) {
  reference_kernel<In, Out><<<samples, kThreads, 0, s>>>(static_cast<const In*>(a), static_cast<const In*>(b),
                                                         static_cast<const Out*>(d), m, k, rows, cols, ref, got,
                                                         abs_sum);
  SS_CUDA_LAUNCHED();
}

}  // namespace

size_t element_bytes(ElementType t) {
  switch (t) {
    case ElementType::kFp32: return 4;
    case ElementType::kBf16:
    case ElementType::kFp16: return 2;
    case ElementType::kFp8E4m3: return 1;
  }
  return 4;
}

void fill_uniform(void* p, ElementType t, size_t count, uint64_t seed, cudaStream_t stream) {
  unsigned blocks = blocks_for(count);
  switch (t) {
    case ElementType::kFp32: fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<float*>(p), count, seed); break;
    case ElementType::kBf16:
      fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(p), count, seed);
      break;
    case ElementType::kFp16: fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<__half*>(p), count, seed); break;
    case ElementType::kFp8E4m3:
      fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(p), count, seed);
      break;
  }
  SS_CUDA_LAUNCHED();
}

void fill_random_words(void* p, size_t bytes, uint64_t seed, cudaStream_t stream) {
  words_kernel<<<blocks_for(bytes / 4), kThreads, 0, stream>>>(static_cast<uint32_t*>(p), bytes / 4, seed);
  SS_CUDA_LAUNCHED();
}

void gemm_reference_samples(const void* a, const void* b, ElementType in, const void* d, ElementType out, int64_t m,
                            int64_t k, const int64_t* rows, const int64_t* cols, int samples, double* ref,
                            double* got, double* abs_sum, cudaStream_t stream) {
  // The bench's pairs: fp32/tf32 → fp32, bf16 → bf16, fp16 → fp16, fp8 → bf16.
  if (in == ElementType::kFp32 && out == ElementType::kFp32)
    launch_reference<float, float>(a, b, d, m, k, rows, cols, samples, ref, got, abs_sum, stream);
  else if (in == ElementType::kBf16 && out == ElementType::kBf16)
    launch_reference<__nv_bfloat16, __nv_bfloat16>(a, b, d, m, k, rows, cols, samples, ref, got, abs_sum, stream);
  else if (in == ElementType::kFp16 && out == ElementType::kFp16)
    launch_reference<__half, __half>(a, b, d, m, k, rows, cols, samples, ref, got, abs_sum, stream);
  else if (in == ElementType::kFp8E4m3 && out == ElementType::kBf16)
    launch_reference<__nv_fp8_e4m3, __nv_bfloat16>(a, b, d, m, k, rows, cols, samples, ref, got, abs_sum, stream);
  else
    throw BenchError("gemm_reference_samples: unsupported input/output type pair");
}

}  // namespace stepscope::hwbench::gpu
