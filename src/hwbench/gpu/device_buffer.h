// Device and pinned host memory owned for a scope: allocated (checked) on
// construction, freed on destruction, so an exception thrown by a failed
// check in the middle of a measurement leaks nothing.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "hwbench/gpu/cuda_check.h"

namespace stepscope::hwbench::gpu {

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { SS_CUDA(cudaMalloc(&p, bytes)); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct PinnedBuffer {
  void* p = nullptr;
  explicit PinnedBuffer(size_t bytes) { SS_CUDA(cudaMallocHost(&p, bytes)); }
  ~PinnedBuffer() { cudaFreeHost(p); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
};

}  // namespace stepscope::hwbench::gpu
