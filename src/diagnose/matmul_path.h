// Whether a kernel is a matrix multiply, and if so whether it runs on tensor
// cores or on the SIMT (FFMA) path. The SIMT path is what cuBLAS and cuDNN
// pick for FP32 when TF32 is off, and runs about 7x (TF32) to 15x (BF16)
// below a Hopper's tensor-core peak; the kernel names say which path ran.
#pragma once

#include <string_view>

#include "analysis/kernel_class.h"

namespace stepscope::diagnose {

enum class MatmulPath : uint8_t {
  kNotMatmul,   // not a GEMM / attention / convolution kernel
  kTensorCore,  // a matmul kernel on tensor cores (HMMA/WGMMA, nvjet, tensorop, Triton mm templates)
  kSimt,        // a matmul kernel on the FFMA/SIMT path: "simt", "ffma", "sgemm", "dgemm" in the name
};

// `family` is the kernel's analysis family (kernel_class.h). Matrix-vector
// kernels (gemv) are memory-bound by nature and count as not-matmul.
MatmulPath matmul_path(std::string_view kernel_name, analysis::KernelFamily family);

}  // namespace stepscope::diagnose
