// Every CUDA, cuBLAS and NCCL call of the bench goes through these checks: a
// failure throws BenchError naming the call, its file:line and the library's
// own message, so a bad GPU gives one clear line instead of wrong numbers.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#ifdef STEPSCOPE_HAVE_NCCL
#include <nccl.h>
#endif

namespace stepscope::hwbench::gpu {

struct BenchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check_cuda(cudaError_t status, const char* call, const char* file, int line);
void check_cublas(cublasStatus_t status, const char* call, const char* file, int line);
#ifdef STEPSCOPE_HAVE_NCCL
void check_nccl(ncclResult_t status, const char* call, const char* file, int line);
#endif

}  // namespace stepscope::hwbench::gpu

#define SS_CUDA(call) ::stepscope::hwbench::gpu::check_cuda((call), #call, __FILE__, __LINE__)
#define SS_CUBLAS(call) ::stepscope::hwbench::gpu::check_cublas((call), #call, __FILE__, __LINE__)
#define SS_NCCL(call) ::stepscope::hwbench::gpu::check_nccl((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch-configuration errors surface here.
#define SS_CUDA_LAUNCHED() SS_CUDA(cudaGetLastError())
