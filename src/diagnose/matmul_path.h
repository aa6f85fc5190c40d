// Whether a kernel is a matrix multiply, and if so whether it runs on tensor
// cores or on the SIMT (FFMA) path. The SIMT path is what cuBLAS and cuDNN
// pick for FP32 when TF32 is off, and runs about 7x (TF32) to 15x (BF16)
// below a Hopper's tensor-core peak; the kernel names say which path ran.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/kernel_class.h"
#include "trace/string_table.h"

namespace stepscope::diagnose {

enum class MatmulPath : uint8_t {
  kNotMatmul,   // not a GEMM / attention / convolution kernel
  kTensorCore,  // a matmul kernel on tensor / matrix cores (HMMA/WGMMA/MFMA: h884, s1688, tensorop, nvjet, Tensile MI*, Triton mm templates)
  kSimt,        // a matmul kernel on the FFMA/SIMT path: sgemm, scudnn, simt, ffma, cuDNN's direct/FFT/Winograd engines, Tensile without MFMA
};

// `family` is the kernel's analysis family (kernel_class.h). Matrix-vector
// kernels (gemv) are memory-bound by nature and count as not-matmul.
MatmulPath matmul_path(std::string_view kernel_name, analysis::KernelFamily family);

// matmul_path decided once per distinct kernel name of a store: traces
// repeat a few hundred names millions of times.
class MatmulPathCache {
 public:
  explicit MatmulPathCache(const trace::StringTable& strings) : strings_(strings), paths_(strings.size(), kUnknown) {}
  MatmulPath of(trace::StringId name, analysis::KernelFamily family) {
    if (name >= paths_.size()) return matmul_path(strings_.get(name), family);
    if (paths_[name] == kUnknown) paths_[name] = static_cast<uint8_t>(matmul_path(strings_.get(name), family));
    return static_cast<MatmulPath>(paths_[name]);
  }

 private:
  static constexpr uint8_t kUnknown = 0xff;
  const trace::StringTable& strings_;
  std::vector<uint8_t> paths_;
};

}  // namespace stepscope::diagnose
