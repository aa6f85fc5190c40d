// The kernels' one way to report a launch: their entry points return "" or a
// one-line error, never throw (the PyTorch front turns the line into an
// exception with the op's name).
#pragma once

#include <cuda_runtime.h>

#include <string>

namespace stepscope::kernels::gpu {

// "" when the last launch on this thread was accepted, else
// "<what> launch failed: <CUDA's reason>".
inline std::string launch_error(const char* what) {
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? "" : std::string(what) + " launch failed: " + cudaGetErrorString(err);
}

}  // namespace stepscope::kernels::gpu
