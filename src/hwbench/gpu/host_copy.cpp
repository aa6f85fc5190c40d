#include "hwbench/gpu/host_copy.h"

#include <fmt/core.h>

#include <cstring>
#include <memory>

#include "hwbench/gpu/cuda_check.h"
#include "hwbench/gpu/device_buffer.h"
#include "hwbench/gpu/element_kernels.h"
#include "hwbench/random_values.h"

namespace stepscope::hwbench::gpu {

using model::BandwidthResult;
namespace {

BandwidthResult make_result(const char* name, double bytes, double seconds) {
  return bandwidth_result("host", name, bytes, seconds, "copy");
}

}  // namespace

std::vector<BandwidthResult> run_host_copy(const BenchContext& ctx) {
  const size_t bytes = ctx.quick ? (size_t{64} << 20) : (size_t{256} << 20);
  DeviceBuffer dev_buffer(bytes);
  PinnedBuffer pinned_buffer(bytes);
  void* dev = dev_buffer.p;
  void* pinned = pinned_buffer.p;
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
