// Device memory owned for a scope: cudaMalloc'd (checked) on construction,
// freed on destruction, so an exception thrown by a failed check in the
// middle of a measurement leaks nothing.
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

}  // namespace stepscope::hwbench::gpu
