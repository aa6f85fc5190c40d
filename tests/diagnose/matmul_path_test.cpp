// The kernel-class table per vendor library and architecture: real kernel
// names as traces write them (PyTorch 1.8-2.x on V100, T4, A100, H100/H200,
// MI300X; several are in ../shared/conformance), each through the whole
// chain a trace takes: class and family (analysis/kernel_class), then the
// matmul path (diagnose/matmul_path).
#include <gtest/gtest.h>

#include "analysis/kernel_class.h"
#include "diagnose/matmul_path.h"

namespace stepscope::diagnose {
namespace {

using analysis::KernelFamily;

MatmulPath path_of(std::string_view name) {
  const analysis::KernelKind k = analysis::classify_kernel(name, trace::EventKind::kKernel);
  return matmul_path(name, k.family);
}

struct Case {
  const char* name;
  MatmulPath path;
};

// One row per kernel family, grouped by architecture.
const Case kTable[] = {
    // Volta, FP32 convolutions and GEMMs: SIMT.
    // cuDNN 7/8 on a V100 with FP32 inputs: no instruction shape in the name.
    {"volta_scudnn_128x64_relu_interior_nn_v1", MatmulPath::kSimt},
    {"cudnn_volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1", MatmulPath::kSimt},
    {"cudnn_infer_volta_scudnn_128x64_stridedB_interior_nn_v1", MatmulPath::kSimt},
    {"void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*, int, "
     "float const*, int, float*, kernel_grad_params, unsigned long long, int, unsigned long long, int, float, int)",
     MatmulPath::kSimt},
    {"void wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>(int, int, int, float const*, int, float*, "
     "float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)",
     MatmulPath::kSimt},
    {"void cudnn::detail::implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int, "
     "int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, "
     "int, float const*, float const*, bool, int, int)",
     MatmulPath::kSimt},
    {"void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::"
     "WinogradDataParams<float, float>)",
     MatmulPath::kSimt},
    {"void fft2d_r2c_32x32<float, false, 1u, false>(float2*, float const*, int, int, int, int, int, int, int, int, "
     "int, cudnn::reduced_divisor, bool, int2, int, int)",
     MatmulPath::kSimt},
    {"volta_sgemm_128x64_nn", MatmulPath::kSimt},
    {"void cudnn::cnn::wgrad_alg1_engine<float, float, 128, 6, 7, 3, 3, 5, false, true>(int, int, int, float "
     "const*, int, float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int*, int)",
     MatmulPath::kSimt},
    {"void cudnn::winograd::generateWinogradTilesKernel<0, float, float>(cudnn::winograd::"
     "GenerateWinogradTilesParams<float, float>)",
     MatmulPath::kSimt},
    // cuDNN's helpers compute offsets or reduce partial sums: not matmuls at all.
    {"void cask_cudnn::computeOffsetsKernel<false, false>(cask_cudnn::ComputeOffsetsParams)", MatmulPath::kNotMatmul},
    {"cask_cudnn::computeWgradBOffsetsKernel(cask_cudnn::ComputeWgradBOffsetsParams)", MatmulPath::kNotMatmul},
    {"void cudnn::cnn::reduce_wgrad_nchw_helper<float, float>(void*, void const*, float, int, int)",
     MatmulPath::kNotMatmul},
    // cuBLAS's split-K reduction sums partial tiles (PyTorch 1.8 on a V100,
    // pytorch/kineto tb_plugin sample resnet50_num_workers_4; bf16 on an H200).
    {"void splitKreduce_kernel<float, float, float, float>(cublasSplitKParams<float>, float const*, float const*, "
     "float*, float const*, float const*, float const*)",
     MatmulPath::kNotMatmul},
    {"void splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, false, float, __nv_bfloat16, "
     "__nv_bfloat16, true, false, false, false>(cublasLt::cublasSplitKParams<float>, float const*, __nv_bfloat16 "
     "const*, float*, __nv_bfloat16*, float const*, float const*, __nv_bfloat16 const*, float const*, __nv_bfloat16*, "
     "void*, long, float*, int*, float*, float*, float const*, float const*, float const*, float const*, float const*)",
     MatmulPath::kNotMatmul},
    // Volta, half precision: tensor cores.
    {"volta_h884gemm_64x64_ldg8_nn", MatmulPath::kTensorCore},
    {"volta_s884gemm_fp16_128x128_ldg8_f2f_nn", MatmulPath::kTensorCore},
    {"volta_h884cudnn_256x64_ldg8_relu_exp_small_nhwc_tn_v1", MatmulPath::kTensorCore},
    {"volta_fp16_s884cudnn_fp16_256x128_ldg8_relu_f2f_exp_small_nhwc2nchw_tn_v1", MatmulPath::kTensorCore},
    // Maxwell and Pascal: no tensor cores.
    {"maxwell_scudnn_128x128_relu_small_nn", MatmulPath::kSimt},
    {"maxwell_hgemm_256x128_nt", MatmulPath::kSimt},
    {"maxwell_sgemm_128x64_nt", MatmulPath::kSimt},
    // Turing and Ampere.
    {"cudnn_turing_scudnn_128x64_stridedB_splitK_xregs_large_nn_v1", MatmulPath::kSimt},
    {"cudnn_infer_ampere_scudnn_128x64_relu_xregs_large_nn_v1", MatmulPath::kSimt},
    {"turing_h1688gemm_128x128_ldg8_nn", MatmulPath::kTensorCore},
    {"turing_fp16_s1688gemm_fp16_256x128_ldg8_f2f_tn", MatmulPath::kTensorCore},
    {"ampere_sgemm_128x64_nn", MatmulPath::kSimt},
    {"ampere_tf32_s1688gemm_tf32_128x128_16x3_nt", MatmulPath::kTensorCore},
    {"ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_tn", MatmulPath::kTensorCore},
    {"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_"
     "kernel__5x_cublas",
     MatmulPath::kSimt},
    {"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16", MatmulPath::kTensorCore},
    // CUTLASS: the operator class in the name.
    {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4>(cutlass_80_tensorop_s1688gemm_64x64_"
     "16x6_nt_align4::Params)",
     MatmulPath::kTensorCore},
    {"void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>(cutlass_80_simt_sgemm_128x256_8x4_nt_align1::"
     "Params)",
     MatmulPath::kSimt},
    {"void cutlass::Kernel2<cutlass_80_wmma_tensorop_f16_s161616gemm_f16_32x32_128x1_tn_align8>(Params)",
     MatmulPath::kTensorCore},
    // Hopper and Blackwell.
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__"
     "5x_cublas",
     MatmulPath::kTensorCore},
    {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", MatmulPath::kTensorCore},
    {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0",
     MatmulPath::kTensorCore},
    {"sm100_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_cluster2x1x1_execute_kernel__5x_cublas",
     MatmulPath::kTensorCore},
    // stepscope's own block-sparse attention v1 (src/kernels/gpu): FMA on CUDA cores.
    {"void stepscope::kernels::gpu::(anonymous namespace)::block_sparse_attention_simt_fwd_v1<stepscope::kernels::gpu::"
     "Bf16, 128>(unsigned short const*, unsigned short const*, unsigned short const*, stepscope::kernels::gpu::"
     "DeviceCsr, stepscope::kernels::gpu::(anonymous namespace)::Dims, float, unsigned short*, float*)",
     MatmulPath::kSimt},
    // ... and v3/v4 (mma.sync on the tensor cores; v4 is v3's kernel with its
    // whole-tile path on: the last template argument), as a profiler names them.
    {"void stepscope::kernels::gpu::bsa::(anonymous namespace)::block_sparse_attention_mma_fwd_v3<stepscope::kernels::"
     "gpu::Bf16, 64, true>(unsigned short const*, unsigned short const*, unsigned short const*, stepscope::kernels::"
     "gpu::DeviceCsr, stepscope::kernels::gpu::bsa::Dims, float, unsigned short*, float*)",
     MatmulPath::kTensorCore},
    {"void stepscope::kernels::gpu::bsa::(anonymous namespace)::block_sparse_attention_mma_dkdv_v3<stepscope::kernels::"
     "gpu::F16, 128, false>(unsigned short const*, unsigned short const*, unsigned short const*, unsigned short const*,"
     " float const*, float const*, stepscope::kernels::gpu::DeviceCsr, stepscope::kernels::gpu::bsa::Dims, float, "
     "float*, float*)",
     MatmulPath::kTensorCore},
    // ROCm: MFMA from the Tensile name (MI<M>x<N>x<K>), Composable Kernel's xdl.
    {"Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI32x32x8x1_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1", MatmulPath::kTensorCore},
    {"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x256x64_MI16x16x1_SN_LDSB1_AFC1", MatmulPath::kTensorCore},
    {"Cijk_Ailk_Bljk_SB_MT64x64x8_SE_1LDSB0_APM1_AF0EM1_AF1EM1_AMAS3_ASE_ASGT", MatmulPath::kSimt},
    // FP32 on an MI250 (gfx90a has FP32 MFMA), from the shared HTA conformance trace.
    {"Cijk_Ailk_Bjlk_SB_Bias_AS_SAV_UserArgs_MT64x16x16_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_EPS0",
     MatmulPath::kTensorCore},
    {"void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<ck::tensor_layout::gemm::RowMajor>>",
     MatmulPath::kTensorCore},
};

TEST(MatmulPathTable, EveryRowTakesItsPath) {
  for (const Case& c : kTable) EXPECT_EQ(path_of(c.name), c.path) << c.name;
  // Every stepscope block-sparse attention kernel is in the attention family.
  for (const char* name : {"block_sparse_attention_simt_fwd_v1", "block_sparse_attention_simt_dq_v1",
                           "block_sparse_attention_simt_dkdv_v1", "block_sparse_attention_wmma_fwd_v2",
                           "block_sparse_attention_mma_fwd_v3", "block_sparse_attention_mma_dq_v3",
                           "block_sparse_attention_mma_dkdv_v3"})
    EXPECT_EQ(analysis::classify_kernel(name, trace::EventKind::kKernel).family, KernelFamily::kAttention) << name;
}

TEST(MatmulPath, KernelNames) {
  EXPECT_EQ(matmul_path("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>(Params)", KernelFamily::kGemm),
            MatmulPath::kSimt);
  EXPECT_EQ(matmul_path("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4",
                        KernelFamily::kGemm),
            MatmulPath::kSimt);
  EXPECT_EQ(matmul_path("ampere_sgemm_128x64_nn", KernelFamily::kGemm), MatmulPath::kSimt);
  EXPECT_EQ(matmul_path("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize64x64x32", KernelFamily::kGemm),
            MatmulPath::kTensorCore);
  EXPECT_EQ(matmul_path("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_nt_align4>(Params)",
                        KernelFamily::kGemm),
            MatmulPath::kTensorCore);
  EXPECT_EQ(matmul_path("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", KernelFamily::kGemm), MatmulPath::kTensorCore);
  EXPECT_EQ(matmul_path("triton_tem_fused_mm_0", KernelFamily::kTriton), MatmulPath::kTensorCore);
  EXPECT_EQ(matmul_path("triton_poi_fused_add_0", KernelFamily::kTriton), MatmulPath::kNotMatmul);
  EXPECT_EQ(matmul_path("gemv2T_kernel_val", KernelFamily::kGemm), MatmulPath::kNotMatmul);
  EXPECT_EQ(matmul_path("void at::native::vectorized_elementwise_kernel<4>", KernelFamily::kElementwise),
            MatmulPath::kNotMatmul);
}

}  // namespace
}  // namespace stepscope::diagnose
