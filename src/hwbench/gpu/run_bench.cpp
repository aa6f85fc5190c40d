#include "hwbench/gpu/run_bench.h"

#include <fmt/core.h>

#include <chrono>
#include <ctime>

#include "hwbench/gpu/bench_context.h"
#include "hwbench/gpu/cuda_check.h"
#include "hwbench/gpu/gpu_libraries.h"
#include "hwbench/gpu/gemm_sweep.h"
#include "hwbench/gpu/hbm_kernels.h"
#include "hwbench/gpu/host_copy.h"
#include "hwbench/gpu/launch_latency.h"
#include "hwbench/gpu/nccl_collectives.h"

namespace stepscope::hwbench::gpu {

using model::DeviceInfo;
using model::BandwidthResult;
using model::HardwareProfile;

void progress(const std::string& line) { fmt::print(stderr, "[bench] {}\n", line); }

BandwidthResult bandwidth_result(const char* section, const char* name, double bytes, double seconds,
                                 const char* unit) {
  BandwidthResult r{name, bytes, seconds, seconds > 0 ? bytes / seconds / 1e9 : 0};
  progress(fmt::format("{:<7} {:<24} {:>9.1f} GB/s  ({:.0f} MiB per {}, {:.3f} ms)", section, name, r.gbps,
                       bytes / (1 << 20), unit, seconds * 1e3));
  return r;
}

namespace {

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

DeviceInfo query_device(int index) {
  DeviceInfo d;
  int count = 0;
  cudaError_t st = cudaGetDeviceCount(&count);
  if (st != cudaSuccess)
    throw BenchError(fmt::format("no usable CUDA GPU: cudaGetDeviceCount failed: {} ({})", cudaGetErrorString(st),
                                 cudaGetErrorName(st)));
  if (count == 0) throw BenchError("no CUDA GPU found (cudaGetDeviceCount returned 0)");
  if (index < 0 || index >= count)
    throw BenchError(fmt::format("--device {}: only {} GPU(s) visible (0..{})", index, count, count - 1));
  SS_CUDA(cudaSetDevice(index));
  cudaDeviceProp p{};
  SS_CUDA(cudaGetDeviceProperties(&p, index));
  d.name = p.name;
  d.index = index;
  d.visible_gpus = count;
  d.compute_major = p.major;
  d.compute_minor = p.minor;
  d.sms = p.multiProcessorCount;
  d.memory_bytes = static_cast<int64_t>(p.totalGlobalMem);
  d.l2_bytes = p.l2CacheSize;
  int v = 0;
  SS_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, index));
  d.sm_clock_mhz = v / 1000;
  SS_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, index));
  d.memory_clock_mhz = v / 1000;
  SS_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrGlobalMemoryBusWidth, index));
  d.memory_bus_bits = v;
  SS_CUDA(cudaDriverGetVersion(&d.driver_version));
  SS_CUDA(cudaRuntimeGetVersion(&d.runtime_version));
  d.cublaslt_version = static_cast<int64_t>(cublaslt().GetVersion());
#ifdef STEPSCOPE_HAVE_NCCL
  SS_NCCL(nccl().GetVersion(&d.nccl_version));
#endif
  // A clear error now beats a failed allocation halfway through.
  size_t free_bytes = 0, total = 0;
  SS_CUDA(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < (size_t{12} << 30))
    throw BenchError(fmt::format("GPU {} ({}) has {:.1f} GiB free; the bench needs 12 GiB", index, d.name,
                                 static_cast<double>(free_bytes) / (1 << 30)));
  return d;
}

}  // namespace

HardwareProfile run_bench(const BenchOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  HardwareProfile p;
  p.date = utc_now();
  p.command = options.command;
  p.tool = "stepscope 0.1.0";
  p.quick = options.quick;
  p.device = query_device(options.device);
  p.gpu = p.device.name;
  progress(fmt::format("{} (GPU {} of {}), {} SMs, {:.1f} GiB, L2 {} MiB, compute {}.{}, driver {}, cuBLASLt {}",
                       p.device.name, p.device.index, p.device.visible_gpus, p.device.sms,
                       static_cast<double>(p.device.memory_bytes) / (1 << 30), p.device.l2_bytes >> 20,
                       p.device.compute_major, p.device.compute_minor, p.device.driver_version,
                       p.device.cublaslt_version));
  BenchContext ctx;
  ctx.device = p.device;
  ctx.quick = options.quick;
  ctx.notes = &p.notes;
  SS_CUDA(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
  L2Flusher flusher(static_cast<size_t>(p.device.l2_bytes));
  ctx.flusher = &flusher;
  if (options.runs("launch")) p.launch = run_launch_latency(ctx);
  if (options.runs("memory")) p.memory = run_memory_bandwidth(ctx);
  if (options.runs("host")) p.host_copy = run_host_copy(ctx);
  if (options.runs("gemm")) p.gemm = run_gemm_sweep(ctx, options.gemm_dtypes);
  if (options.runs("nccl")) p.collectives = run_collectives(ctx, options.nccl_gpus);
  SS_CUDA(cudaStreamDestroy(ctx.stream));
  p.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

}  // namespace stepscope::hwbench::gpu
