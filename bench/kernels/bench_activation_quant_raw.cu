// Timing of the activation quantize/dequantize kernels without PyTorch, to
// compare build-time variants of the quantize kernel (elements per thread,
// -DSTEPSCOPE_AQ_VEC=8|16|32, and -DSTEPSCOPE_AQ_MIN_BLOCKS) on one device in
// one run. bench_activation_compression.py is the benchmark of record (it
// also checks the codes against the torch reference); this one only times.
//
// Build and run (the H200 device machine has nvcc; workloads/kernels_h200.sh
// stage `variants` builds several and runs them):
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -Isrc -DSTEPSCOPE_AQ_VEC=32
//        bench/kernels/bench_activation_quant_raw.cu src/kernels/gpu/activation_quant.cu -o aq_raw
//   (one command line)
//   ./aq_raw [GiB of bf16 input, default 1]
//
// Per case: median of 30 runs timed with CUDA events, the L2 flushed before
// each (a 256 MiB memset; the H200's L2 is 50 MB), GB/s counting bytes read
// plus bytes written, and % of the device-to-device copy bandwidth measured
// the same way in the same process.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/gpu/activation_quant.h"

namespace {

using stepscope::kernels::gpu::ActDType;

bool check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

// N(0,1)-like bf16 values from a counter hash (sum of four uniforms), so the
// blocks hold real spreads, not zeros.
__global__ void fill_bf16(uint16_t* x, int64_t n, uint32_t seed) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float s = 0;
    for (uint32_t k = 0; k < 4; ++k) {
      uint32_t h = static_cast<uint32_t>(i) * 0x9E3779B9u + seed + k * 0x85EBCA6Bu;
      h ^= h >> 16, h *= 0x7FEB352Du, h ^= h >> 15, h *= 0x846CA68Bu, h ^= h >> 16;
      s += static_cast<float>(h >> 8) * (1.0f / 16777216.0f);
    }
    const float v = (s - 2.0f) * 1.7320508f;  // variance of the sum is 1/3
    uint32_t u;
    memcpy(&u, &v, 4);
    x[i] = static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
  }
}

template <class F>
double median_us(F&& fn, void* flush, size_t flush_bytes) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  for (int i = 0; i < 5; ++i) fn();
  std::vector<double> t;
  for (int i = 0; i < 30; ++i) {
    check(cudaMemsetAsync(flush, i & 0xFF, flush_bytes), "flush");
    check(cudaEventRecord(a), "record");
    fn();
    check(cudaEventRecord(b), "record");
    check(cudaEventSynchronize(b), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "elapsed");
    t.push_back(ms * 1e3);
  }
  check(cudaGetLastError(), "launch");
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const double gib = argc > 1 ? std::atof(argv[1]) : 1.0;
  if (!(gib > 0 && gib <= 16)) {
    std::fprintf(stderr, "usage: %s [GiB of bf16 input, 0 < GiB <= 16]\n", argv[0]);
    return 2;
  }
  const int64_t n = static_cast<int64_t>(gib * (1ull << 30)) / 2;
  uint16_t *x = nullptr, *y = nullptr, *scale = nullptr, *zero = nullptr;
  uint8_t* codes = nullptr;
  void* flush = nullptr;
  const size_t flush_bytes = 256u << 20;
  check(cudaMalloc(&x, n * 2), "malloc x");
  check(cudaMalloc(&y, n * 2), "malloc y");
  check(cudaMalloc(&codes, n), "malloc codes");
  check(cudaMalloc(&scale, (n / 64 + 1) * 2), "malloc scale");
  check(cudaMalloc(&zero, (n / 64 + 1) * 2), "malloc zero");
  check(cudaMalloc(&flush, flush_bytes), "malloc flush");
  fill_bf16<<<4096, 256>>>(x, n, 12345u);
  check(cudaDeviceSynchronize(), "fill");

  const double copy_us = median_us([&] { check(cudaMemcpyAsync(y, x, n * 2, cudaMemcpyDeviceToDevice), "copy"); },
                                   flush, flush_bytes);
  const double copy_bw = 4.0 * n / (copy_us * 1e-6);
#ifndef STEPSCOPE_AQ_VEC
#define STEPSCOPE_AQ_VEC 32  // activation_quant.cu's default
#endif
  std::printf("variant vec=%d, %lld bf16 elements; copy %.1f us = %.0f GB/s\n", STEPSCOPE_AQ_VEC,
              static_cast<long long>(n), copy_us, copy_bw / 1e9);
  std::printf("%-34s %10s %8s %7s\n", "case", "us", "GB/s", "%copy");
  struct Cfg {
    int bits, block;
    bool stochastic;
  };
  for (const Cfg c : {Cfg{4, 64, false}, Cfg{4, 128, false}, Cfg{8, 64, false}, Cfg{8, 128, false},
                      Cfg{4, 64, true}, Cfg{8, 64, true}}) {
    const double bytes = 2.0 * n + static_cast<double>(n) * c.bits / 8 + 4.0 * ((n + c.block - 1) / c.block);
    std::string err;
    const double q = median_us(
        [&] {
          err = stepscope::kernels::gpu::act_quantize(x, ActDType::kBFloat16, n, c.bits, c.block, c.stochastic, 7,
                                                      codes, scale, zero, nullptr);
        },
        flush, flush_bytes);
    if (!err.empty()) {
      std::fprintf(stderr, "act_quantize: %s\n", err.c_str());
      return 1;
    }
    char name[64];
    std::snprintf(name, sizeof name, "quantize %d-bit block %d%s", c.bits, c.block, c.stochastic ? " stoch" : "");
    std::printf("%-34s %10.1f %8.0f %6.1f%%\n", name, q, bytes / (q * 1e-6) / 1e9, 100.0 * bytes / (q * 1e-6) / copy_bw);
    if (c.stochastic) continue;
    const double d = median_us(
        [&] {
          err = stepscope::kernels::gpu::act_dequantize(codes, scale, zero, n, c.bits, c.block, ActDType::kBFloat16, y,
                                                        nullptr);
        },
        flush, flush_bytes);
    if (!err.empty()) {
      std::fprintf(stderr, "act_dequantize: %s\n", err.c_str());
      return 1;
    }
    std::snprintf(name, sizeof name, "dequantize %d-bit block %d", c.bits, c.block);
    std::printf("%-34s %10.1f %8.0f %6.1f%%\n", name, d, bytes / (d * 1e-6) / 1e9, 100.0 * bytes / (d * 1e-6) / copy_bw);
  }
  return 0;
}
