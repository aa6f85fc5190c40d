#include "hwbench/gpu/cuda_check.h"
#include "hwbench/gpu/gpu_libraries.h"

#include <fmt/core.h>

#include <filesystem>

namespace stepscope::hwbench::gpu {
namespace {

std::string where(const char* file, int line) {
  return fmt::format("{}:{}", std::filesystem::path(file).filename().string(), line);
}

}  // namespace

void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw BenchError(fmt::format("{} failed: {} ({}) at {}", call, cudaGetErrorString(status), cudaGetErrorName(status),
                               where(file, line)));
}

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw BenchError(fmt::format("{} failed: cuBLAS status {} at {}", call, static_cast<int>(status), where(file, line)));
}

#ifdef STEPSCOPE_HAVE_NCCL
void check_nccl(ncclResult_t status, const char* call, const char* file, int line) {
  if (status == ncclSuccess) return;
  throw BenchError(fmt::format("{} failed: {} at {}", call, nccl().GetErrorString(status), where(file, line)));
}
#endif

}  // namespace stepscope::hwbench::gpu
