#include "diagnose/matmul_path.h"

#include <array>

#include "analysis/name_patterns.h"

namespace stepscope::diagnose {
namespace {

using analysis::Match;
using analysis::NamePattern;
using analysis::NamePatterns;

// What a matmul kernel's name says about its path, per vendor library and
// architecture, tried in order with case ignored: the first rule that
// matches decides; a matmul no rule matches is taken as tensor-core (the
// default of cuBLAS/cuDNN for half precision and TF32, and of every Hopper
// and Blackwell library). docs/metrics.md ("Kernel classes") has this table
// with example names and the naming sources.
//
// Naming sources: cuBLAS / cuDNN precompiled kernels are named
// "<arch>_<data type letter><MMA instruction shape><gemm|cudnn>_...": an
// instruction shape (884 = Volta HMMA.884, 1688 = Turing/Ampere HMMA.1688,
// 16816 = Ampere HMMA.16816, 8816/16832 = IMMA) means tensor cores; a bare
// letter ("sgemm", "hgemm", "scudnn" = FP32 / FP16 math on CUDA cores) means
// none (the tensor-core name list of NVIDIA PyProf, pyprof/prof/tc.py, which
// the PyTorch TensorBoard profiler plugin reuses as TC_Allowlist in
// pytorch/kineto tb_plugin). CUTLASS names its operator
// class ("tensorop", "wmma_tensorop" vs "simt"; cutlass/library/src/
// generator naming). Hopper/Blackwell cuBLASLt kernels ("sm90_xmma_*",
// "sm100_xmma_*", "nvjet_*") are warp-group MMA unless they say "ffma".
// ROCm Tensile / hipBLASLt solutions ("Cijk_A.._B.._<types>_MT..") carry
// "MI<M>x<N>x<K>" when they use MFMA matrix instructions (Tensile's
// MatrixInstruction parameter); without it they run on the vector ALUs.
// Composable Kernel marks MFMA kernels "xdl"; MIOpen's implicit-GEMM
// "gtcx" kernels are its xdlops (MFMA) variants.
using PathRule = analysis::NameRule<MatmulPath>;

constexpr std::array kPathRules = {
    // Matrix-vector kernels are memory-bound by nature: not counted as matmuls.
    PathRule{{Match::kContains, "gemv"}, MatmulPath::kNotMatmul},
    // cuDNN's helpers around a convolution (index offsets, the split-K wgrad
    // reduction) compute no products: cask_cudnn::computeOffsetsKernel,
    // computeWgradBOffsetsKernel, cudnn::cnn::reduce_wgrad_nchw_helper.
    PathRule{{Match::kContains, "offsetskernel"}, MatmulPath::kNotMatmul},
    PathRule{{Match::kContains, "reduce_wgrad"}, MatmulPath::kNotMatmul},
    // cuBLAS/cuBLASLt split-K: a GEMM split along K (cuBLASLt's
    // CUBLASLT_ALGO_CONFIG_SPLITK_NUM) has its slices' partial results summed
    // afterwards (the reduction schemes of cublasLtReductionScheme_t), here by
    // splitKreduce_kernel<...>, whatever the GEMM's type: additions only.
    PathRule{{Match::kContains, "splitkreduce"}, MatmulPath::kNotMatmul},
    // --- Tensor-core markers; they win over SIMT-looking words in long
    // template names ("cutlass_80_tensorop_s1688gemm").
    // CUTLASS 2.x/3.x operator class.
    PathRule{{Match::kContains, "tensorop"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "wmma"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "wgmma"}, MatmulPath::kTensorCore},  // Hopper warp-group MMA (cuDNN sdpa, CUTLASS 3)
    PathRule{{Match::kContains, "hmma"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "imma"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "tf32"}, MatmulPath::kTensorCore},
    // Volta (sm70): volta_h884gemm_*, volta_s884gemm_fp16_*, volta_h884cudnn_*,
    // volta_fp16_s884cudnn_fp16_*.
    PathRule{{Match::kContains, "h884"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "s884"}, MatmulPath::kTensorCore},
    // Turing (sm75) and Ampere (sm80/86): turing_h1688gemm_*,
    // turing_fp16_s1688gemm_fp16_*, ampere_tf32_s1688gemm_tf32_*,
    // ampere_bf16_s16816gemm_bf16_*, ampere_h16816gemm_*, *_i8816gemm_*.
    PathRule{{Match::kContains, "s1688"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "s16816"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "h1688"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "h16816"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "i8816"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "i16832"}, MatmulPath::kTensorCore},
    // ROCm: Tensile / hipBLASLt MFMA shapes (MI4x4, MI16x16, MI32x32),
    // Composable Kernel's xdl kernels, MIOpen's xdlops implicit GEMM.
    PathRule{{Match::kContains, "_mi4x4"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "_mi16x16"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "_mi32x32"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "_xdl"}, MatmulPath::kTensorCore},
    PathRule{{Match::kContains, "gtcx"}, MatmulPath::kTensorCore},
    // --- SIMT (CUDA-core FFMA / HFMA, or vector ALU) markers.
    PathRule{{Match::kContains, "simt"}, MatmulPath::kSimt},  // CUTLASS cutlass_*_simt_sgemm_*
    PathRule{{Match::kContains, "ffma"}, MatmulPath::kSimt},  // sm80_xmma_gemm_f32f32_..._ffma_*
    // cuBLAS letter + "gemm" without an instruction shape: volta_sgemm_*,
    // ampere_sgemm_*, maxwell_hgemm_*, *_dgemm_*, *_cgemm_*; cuDNN's
    // implicit_convolve_sgemm / explicit_convolve_sgemm.
    PathRule{{Match::kContains, "sgemm"}, MatmulPath::kSimt},
    PathRule{{Match::kContains, "dgemm"}, MatmulPath::kSimt},
    PathRule{{Match::kContains, "_hgemm"}, MatmulPath::kSimt},
    PathRule{{Match::kContains, "_cgemm"}, MatmulPath::kSimt},
    PathRule{{Match::kContains, "_zgemm"}, MatmulPath::kSimt},
    PathRule{{Match::kContains, "_f32f32_f32f32_f32_"}, MatmulPath::kSimt},  // xmma FP32 in, FP32 math
    // cuDNN letter + "cudnn" without an instruction shape: volta_scudnn_*,
    // cudnn_infer_volta_scudnn_*, turing_scudnn_*, maxwell_scudnn_*,
    // *_hcudnn_* (FP16 on CUDA cores), *_dcudnn_*.
    PathRule{{Match::kContains, "scudnn"}, MatmulPath::kSimt},
    PathRule{{Match::kContains, "hcudnn"}, MatmulPath::kSimt},
    PathRule{{Match::kContains, "dcudnn"}, MatmulPath::kSimt},
    // cuDNN's direct, FFT and Winograd-transform engines are CUDA-core code:
    // cudnn::detail::dgrad_engine<float,...>, wgrad_alg0_engine<float,...>,
    // cudnn::cnn::wgrad_alg1_engine<float,...>, dgrad2d_alg1_1, fft2d_r2c_*,
    // cudnn::winograd_nonfused::winograd*, cudnn::winograd::generateWinogradTilesKernel.
    PathRule{{Match::kContains, "dgrad_engine"}, MatmulPath::kSimt},
    PathRule{{Match::kContains, "wgrad_alg0_engine"}, MatmulPath::kSimt},
    PathRule{{Match::kContains, "wgrad_alg1_engine"}, MatmulPath::kSimt},
    PathRule{{Match::kContains, "dgrad2d_alg"}, MatmulPath::kSimt},
    PathRule{{Match::kContains, "fft2d_"}, MatmulPath::kSimt},
    PathRule{{Match::kContains, "winograd_nonfused"}, MatmulPath::kSimt},
    PathRule{{Match::kContains, "cudnn::winograd::"}, MatmulPath::kSimt},  // generateWinogradTilesKernel
    // Maxwell and Pascal (sm5x/sm6x; cuBLAS/cuDNN name Pascal kernels
    // maxwell_*) have no tensor cores at all.
    PathRule{{Match::kContains, "maxwell_"}, MatmulPath::kSimt},
    // Tensile without a MatrixInstruction (MFMA rules above): vector ALU.
    PathRule{{Match::kPrefix, "cijk_"}, MatmulPath::kSimt},
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
