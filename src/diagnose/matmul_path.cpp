#include "diagnose/matmul_path.h"

#include <array>

#include "analysis/name_patterns.h"

namespace stepscope::diagnose {
namespace {

using analysis::Match;
using analysis::NamePattern;
using analysis::NamePatterns;

// What a matmul kernel's name says about its path, tried in order, case
// ignored: the first word found decides.
using PathRule = analysis::NameRule<MatmulPath>;

constexpr std::array kPathRules = {
    // Matrix-vector kernels are memory-bound by nature: not counted as matmuls.
    PathRule{{Match::kContains, "gemv"}, MatmulPath::kNotMatmul},
    // Tensor-core markers win over "gemm"-ish SIMT words in long template names.
    PathRule{{Match::kContains, "tensorop"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "hmma"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "wgmma"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "tf32"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "s1688"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "s16816"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "h1688"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "h16816"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "i8816"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "simt"}, MatmulPath::kSimt},
    PathRule{{Match::kContains, "ffma"}, MatmulPath::kSimt},
    PathRule{{Match::kContains, "sgemm"}, MatmulPath::kSimt},
    PathRule{{Match::kContains, "dgemm"}, MatmulPath::kSimt},
    PathRule{{Match::kContains, "_f32f32_f32f32_f32_"}, MatmulPath::kSimt},
};

const analysis::NameRules<MatmulPath>& path_rules() {
  static const analysis::NameRules<MatmulPath> rules(kPathRules, /*fold_case=*/true);
  return rules;
}

}  // namespace

MatmulPath matmul_path(std::string_view kernel_name, analysis::KernelFamily family) {
  using analysis::KernelFamily;
  bool matmul = family == KernelFamily::kGemm || family == KernelFamily::kAttention ||
                family == KernelFamily::kConvolution;
  // Inductor's matmul templates are named triton_tem_fused_*; its pointwise
  // and reduction kernels (triton_poi_/triton_red_/triton_per_) are not matmuls.
  if (family == KernelFamily::kTriton) {
    static const NamePatterns template_kernel(std::array{NamePattern{Match::kContains, "_tem_"}}, /*fold_case=*/true);
    matmul = template_kernel.first_match(kernel_name) == 0;
  }
  if (!matmul) return MatmulPath::kNotMatmul;
  // A matmul whose name says nothing about its path: cuBLAS/cuDNN run
  // half-precision and TF32 matmuls on tensor cores, so that is the default.
  return path_rules().match(kernel_name).value_or(MatmulPath::kTensorCore);
}

}  // namespace stepscope::diagnose
