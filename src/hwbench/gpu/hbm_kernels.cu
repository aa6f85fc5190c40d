#include "hwbench/gpu/hbm_kernels.h"

#include <fmt/core.h>

#include <functional>

#include "hwbench/gpu/cuda_check.h"
#include "hwbench/gpu/device_buffer.h"
#include "hwbench/gpu/element_kernels.h"

namespace stepscope::hwbench::gpu {

using model::BandwidthResult;
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;  // independent 16-byte loads in flight per thread

__device__ __forceinline__ void mix(int4& acc, const int4& v) {
  acc.x ^= v.x;
  acc.y ^= v.y;
  acc.z ^= v.z;
  acc.w ^= v.w;
}

// The sink write happens only when the xor of everything read hits one
// value (probability 2^-32 per thread on random data): the loads cannot be
// dropped as dead code, and the kernel writes (almost) nothing.
// One grid-stride pass over src, kUnroll loads in flight per thread, folded into acc.
__device__ __forceinline__ void read_pass(const int4* __restrict__ src, size_t n, int4& acc) {
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    int4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = src[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) mix(acc, v[u]);
  }
  for (; i < n; i += stride) mix(acc, src[i]);
}

__global__ void read_kernel(const int4* __restrict__ src, size_t n, int4* sink) {
  int4 acc = make_int4(0, 0, 0, 0);
  read_pass(src, n, acc);
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x5bd1e995) sink[threadIdx.x] = acc;
}

__global__ void write_kernel(int4* __restrict__ dst, size_t n, int seed) {
  size_t stride = size_t{gridDim.x} * blockDim.x;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += stride) {
    int v = static_cast<int>(i) ^ seed;
    dst[i] = make_int4(v, v + 1, v + 2, v + 3);
  }
}

__global__ void copy_kernel(const int4* __restrict__ src, int4* __restrict__ dst, size_t n) {
  size_t stride = size_t{gridDim.x} * blockDim.x;
  size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    int4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = src[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) dst[i + u * stride] = v[u];
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

// Tiled kernels: one contiguous tile of T threads × U vectors per block and
// as many blocks as tiles (the layout of PyTorch's elementwise kernels), so
// each block's accesses stay inside one span, kinder to DRAM pages than a
// grid stride. kStreaming adds cache-streaming hints (ld/st .cs: evict first).
template <int T, int U>
__global__ void read_tiled_kernel(const int4* __restrict__ src, size_t n, int4* sink) {
  size_t base = blockIdx.x * size_t{T * U} + threadIdx.x;
  int4 acc = make_int4(0, 0, 0, 0);
  int4 v[U];
#pragma unroll
  for (int u = 0; u < U; ++u) v[u] = base + u * T < n ? src[base + u * T] : make_int4(0, 0, 0, 0);
#pragma unroll
  for (int u = 0; u < U; ++u) mix(acc, v[u]);
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x5bd1e995) sink[threadIdx.x] = acc;
}

template <int T, int U, bool kStreaming>
__global__ void copy_tiled_kernel(const int4* __restrict__ src, int4* __restrict__ dst, size_t n) {
  size_t base = blockIdx.x * size_t{T * U} + threadIdx.x;
  if (base + (U - 1) * T < n) {
    int4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = kStreaming ? __ldcs(src + base + u * T) : src[base + u * T];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (kStreaming)
        __stcs(dst + base + u * T, v[u]);
      else
        dst[base + u * T] = v[u];
    }
  } else {
    for (int u = 0; u < U; ++u)
      if (base + u * T < n) dst[base + u * T] = src[base + u * T];
  }
}

template <int T, int U>
__global__ void triad_tiled_kernel(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c,
                                   size_t n, float s) {
  size_t base = blockIdx.x * size_t{T * U} + threadIdx.x;
  float4 x[U], y[U];
#pragma unroll
  for (int u = 0; u < U; ++u)
    if (base + u * T < n) {
      x[u] = b[base + u * T];
      y[u] = c[base + u * T];
    }
#pragma unroll
  for (int u = 0; u < U; ++u)
    if (base + u * T < n)
      a[base + u * T] = make_float4(x[u].x + s * y[u].x, x[u].y + s * y[u].y, x[u].z + s * y[u].z, x[u].w + s * y[u].w);
}

template <int T, int U>
unsigned tiles_for(size_t n) {
  return static_cast<unsigned>((n + size_t{T * U} - 1) / size_t{T * U});
}

// STREAM's triad, a = b + s·c, on float4.
__global__ void triad_kernel(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c,
                             size_t n, float s) {
  size_t stride = size_t{gridDim.x} * blockDim.x;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += stride) {
    float4 x = b[i], y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

// L2: every thread walks the same small buffer `passes` times.
__global__ void l2_read_kernel(const int4* __restrict__ src, size_t n, int passes, int4* sink) {
  int4 acc = make_int4(0, 0, 0, 0);
  for (int p = 0; p < passes; ++p) read_pass(src, n, acc);
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x5bd1e995) sink[threadIdx.x] = acc;
}

BandwidthResult make_result(const char* name, double bytes, double seconds) {
  return bandwidth_result("memory", name, bytes, seconds, "run");
}

}  // namespace

std::vector<BandwidthResult> run_memory_bandwidth(const BenchContext& ctx) {
  const size_t pool_bytes = ctx.quick ? (size_t{1} << 30) : (size_t{4} << 30);
  const size_t array_bytes = pool_bytes / 4;
  const size_t n = array_bytes / sizeof(int4);
  DeviceBuffer pool(pool_bytes), sink(kThreads * sizeof(int4));
  fill_random_words(pool.p, pool_bytes, 0x4242, ctx.stream);
  auto array = [&](int slot) { return static_cast<int4*>(pool.p) + static_cast<size_t>(slot % 4) * n; };
  // Enough resident blocks on every SM (8 × 256 threads = 2048, the SM's
  // maximum), each thread striding over the array.
  const unsigned blocks = static_cast<unsigned>(ctx.device.sms * 8);
  TimingPlan plan{2, ctx.quick ? 8 : 20, ctx.flusher};
  int turn = 0;  // rotates the arrays between calls
  std::vector<BandwidthResult> out;

  // Read, copy and triad come in several layouts (grid-stride; tiled with
  // T threads × U vectors per block; copy also with streaming hints). Each
  // is reported and the fastest is the ceiling (hbm_read, hbm_copy,
  // hbm_triad), as the GEMM sweep keeps cuBLASLt's fastest algorithm: the
  // bench asks what the memory can do, not what one kernel shape does.
  using Launch = std::function<void(cudaStream_t, int)>;  // (stream, turn)
  auto measure = [&](const char* name, double bytes, int turn_step, const Launch& launch) {
    double t = median_seconds(
        [&](cudaStream_t s) {
          launch(s, turn);
          turn += turn_step;
          SS_CUDA_LAUNCHED();
        },
        ctx.stream, plan);
    return make_result(name, bytes, t);
  };
  auto best_of = [&](const char* name, const std::vector<BandwidthResult>& variants) {
    BandwidthResult best = variants.front();
    for (const BandwidthResult& v : variants)
      if (v.gbps > best.gbps) best = v;
    progress(fmt::format("memory  {:<24} {:>9.1f} GB/s  (fastest: {})", name, best.gbps, best.name));
    best.name = name;
    out.push_back(best);
    out.insert(out.end(), variants.begin(), variants.end());
  };
  auto* sink4 = static_cast<int4*>(sink.p);
  const double one = static_cast<double>(array_bytes);
  best_of("hbm_read",
          {measure("hbm_read_gridstride", one, 1,
                   [&](cudaStream_t s, int k) { read_kernel<<<blocks, kThreads, 0, s>>>(array(k), n, sink4); }),
           measure("hbm_read_tiled_256x4", one, 1,
                   [&](cudaStream_t s, int k) {
                     read_tiled_kernel<256, 4><<<tiles_for<256, 4>(n), 256, 0, s>>>(array(k), n, sink4);
                   }),
           measure("hbm_read_tiled_128x2", one, 1, [&](cudaStream_t s, int k) {
             read_tiled_kernel<128, 2><<<tiles_for<128, 2>(n), 128, 0, s>>>(array(k), n, sink4);
           })});
  out.push_back(measure("hbm_write", one, 1, [&](cudaStream_t s, int k) {
    write_kernel<<<blocks, kThreads, 0, s>>>(array(k), n, k);
  }));
  // Writes above replaced random data with a pattern: refill before copies.
  fill_random_words(pool.p, pool_bytes, 0x4343, ctx.stream);
  const double two = 2 * one;
  best_of("hbm_copy",
          {measure("hbm_copy_gridstride", two, 2,
                   [&](cudaStream_t s, int k) { copy_kernel<<<blocks, kThreads, 0, s>>>(array(k), array(k + 1), n); }),
           measure("hbm_copy_tiled_256x4", two, 2,
                   [&](cudaStream_t s, int k) {
                     copy_tiled_kernel<256, 4, false><<<tiles_for<256, 4>(n), 256, 0, s>>>(array(k), array(k + 1), n);
                   }),
           measure("hbm_copy_tiled_256x8", two, 2,
                   [&](cudaStream_t s, int k) {
                     copy_tiled_kernel<256, 8, false><<<tiles_for<256, 8>(n), 256, 0, s>>>(array(k), array(k + 1), n);
                   }),
           measure("hbm_copy_tiled_128x2", two, 2,
                   [&](cudaStream_t s, int k) {
                     copy_tiled_kernel<128, 2, false><<<tiles_for<128, 2>(n), 128, 0, s>>>(array(k), array(k + 1), n);
                   }),
           measure("hbm_copy_tiled_512x2", two, 2,
                   [&](cudaStream_t s, int k) {
                     copy_tiled_kernel<512, 2, false><<<tiles_for<512, 2>(n), 512, 0, s>>>(array(k), array(k + 1), n);
                   }),
           measure("hbm_copy_tiled_256x4_cs", two, 2, [&](cudaStream_t s, int k) {
             copy_tiled_kernel<256, 4, true><<<tiles_for<256, 4>(n), 256, 0, s>>>(array(k), array(k + 1), n);
           })});
  fill_uniform(pool.p, ElementType::kFp32, pool_bytes / 4, 0x4444, ctx.stream);
  auto f4 = [&](int k) { return reinterpret_cast<float4*>(array(k)); };
  const double three = 3 * one;
  best_of("hbm_triad",
          {measure("hbm_triad_gridstride", three, 1,
                   [&](cudaStream_t s, int k) {
                     triad_kernel<<<blocks, kThreads, 0, s>>>(f4(k), f4(k + 1), f4(k + 2), n, 0.5f);
                   }),
           measure("hbm_triad_tiled_256x4", three, 1,
                   [&](cudaStream_t s, int k) {
                     triad_tiled_kernel<256, 4><<<tiles_for<256, 4>(n), 256, 0, s>>>(f4(k), f4(k + 1), f4(k + 2), n, 0.5f);
                   }),
           measure("hbm_triad_tiled_128x2", three, 1, [&](cudaStream_t s, int k) {
             triad_tiled_kernel<128, 2><<<tiles_for<128, 2>(n), 128, 0, s>>>(f4(k), f4(k + 1), f4(k + 2), n, 0.5f);
           })});
  double t = median_seconds(
      [&](cudaStream_t s) {
        SS_CUDA(cudaMemcpyAsync(array(turn + 1), array(turn), array_bytes, cudaMemcpyDeviceToDevice, s));
        turn += 2;
      },
      ctx.stream, plan);
  out.push_back(make_result("hbm_copy_memcpy", 2.0 * static_cast<double>(array_bytes), t));

  // L2: a quarter of the L2 (H100/H200 L2 is two partitions; a quarter fits
  // in the near one's share), read 64 times per launch, no flush.
  size_t l2_bytes = static_cast<size_t>(ctx.device.l2_bytes / 4) & ~size_t{4095};
  if (l2_bytes >= (size_t{1} << 20)) {
    const int passes = 64;
    size_t ln = l2_bytes / sizeof(int4);
    TimingPlan cached{3, ctx.quick ? 8 : 20, nullptr};
    t = median_seconds(
        [&](cudaStream_t s) {
          l2_read_kernel<<<blocks, kThreads, 0, s>>>(array(0), ln, passes, static_cast<int4*>(sink.p));
          SS_CUDA_LAUNCHED();
        },
        ctx.stream, cached);
    out.push_back(make_result("l2_read", static_cast<double>(l2_bytes) * passes, t));
  } else {
    ctx.note("l2_read not measured: the device reports no L2 size");
  }
  SS_CUDA(cudaStreamSynchronize(ctx.stream));
  return out;
}

}  // namespace stepscope::hwbench::gpu
