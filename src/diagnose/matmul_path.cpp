#include "diagnose/matmul_path.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace stepscope::diagnose {

MatmulPath matmul_path(std::string_view kernel_name, analysis::KernelFamily family) {
  using analysis::KernelFamily;
  std::string lower(kernel_name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  auto has = [&](std::string_view s) { return lower.find(s) != std::string::npos; };
  bool matmul = family == KernelFamily::kGemm || family == KernelFamily::kAttention ||
                family == KernelFamily::kConvolution;
  // Inductor's matmul templates are named triton_tem_fused_*; its pointwise
  // and reduction kernels (triton_poi_/triton_red_/triton_per_) are not matmuls.
  if (family == KernelFamily::kTriton && has("_tem_")) matmul = true;
  if (!matmul || has("gemv")) return MatmulPath::kNotMatmul;
  // Tensor-core markers win over "gemm"-ish SIMT words in long template names.
  if (has("tensorop") || has("hmma") || has("wgmma") || has("tf32") || has("s1688") || has("s16816") ||
      has("h1688") || has("h16816") || has("i8816"))
    return MatmulPath::kTensorCore;
  if (has("simt") || has("ffma") || has("sgemm") || has("dgemm") || has("_f32f32_f32f32_f32_"))
    return MatmulPath::kSimt;
  return MatmulPath::kTensorCore;
}

}  // namespace stepscope::diagnose
