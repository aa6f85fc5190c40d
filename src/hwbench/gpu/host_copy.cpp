#include "hwbench/gpu/host_copy.h"

#include <fmt/core.h>

#include <cstring>
#include <memory>

#include "hwbench/gpu/cuda_check.h"
#include "hwbench/gpu/element_kernels.h"
#include "hwbench/random_values.h"

namespace stepscope::hwbench::gpu {
namespace {

BandwidthResult make_result(const char* name, double bytes, double seconds) {
  BandwidthResult r{name, bytes, seconds, seconds > 0 ? bytes / seconds / 1e9 : 0};
  progress(fmt::format("host    {:<16} {:>9.1f} GB/s  ({:.0f} MiB per copy, {:.3f} ms)", name, r.gbps,
                       bytes / (1 << 20), seconds * 1e3));
  return r;
}

}  // namespace

std::vector<BandwidthResult> run_host_copy(const BenchContext& ctx) {
  const size_t bytes = ctx.quick ? (size_t{64} << 20) : (size_t{256} << 20);
  void* dev = nullptr;
  void* pinned = nullptr;
  SS_CUDA(cudaMalloc(&dev, bytes));
  std::unique_ptr<void, void (*)(void*)> dev_guard(dev, [](void* p) { cudaFree(p); });
  SS_CUDA(cudaMallocHost(&pinned, bytes));
  std::unique_ptr<void, void (*)(void*)> pinned_guard(pinned, [](void* p) { cudaFreeHost(p); });
  // Pageable: an ordinary heap block, touched so its pages exist.
  std::unique_ptr<uint32_t[]> pageable(new uint32_t[bytes / 4]);
  for (size_t i = 0; i < bytes / 4; ++i) pageable[i] = static_cast<uint32_t>(mix_bits(7, i));
  std::memcpy(pinned, pageable.get(), bytes);
  fill_random_words(dev, bytes, 0x5151, ctx.stream);

  TimingPlan plan{1, ctx.quick ? 3 : 7, nullptr};
  auto copy = [&](void* dst, const void* src, cudaMemcpyKind kind) {
    return median_seconds([&](cudaStream_t s) { SS_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, s)); }, ctx.stream,
                          plan);
  };
  double b = static_cast<double>(bytes);
  std::vector<BandwidthResult> out;
  out.push_back(make_result("h2d_pinned", b, copy(dev, pinned, cudaMemcpyHostToDevice)));
  out.push_back(make_result("d2h_pinned", b, copy(pinned, dev, cudaMemcpyDeviceToHost)));
  out.push_back(make_result("h2d_pageable", b, copy(dev, pageable.get(), cudaMemcpyHostToDevice)));
  out.push_back(make_result("d2h_pageable", b, copy(pageable.get(), dev, cudaMemcpyDeviceToHost)));
  SS_CUDA(cudaStreamSynchronize(ctx.stream));
  return out;
}

}  // namespace stepscope::hwbench::gpu
