// The type a kernel computes in: from a matmul kernel's name where it says,
// else from the innermost aten op that launched it.
#include <gtest/gtest.h>

#include "diagnose/launch_precision.h"

namespace stepscope::diagnose {
namespace {

TEST(LaunchPrecision, FirstFloatingInputDecides) {
  using V = std::vector<std::string>;
  EXPECT_EQ(float_type_of(V{"long int", "float"}), OpFloat::kFloat32);  // embedding-style: indices first
  EXPECT_EQ(float_type_of(V{"", "c10::BFloat16", "float"}), OpFloat::kOther);
  EXPECT_EQ(float_type_of(V{"c10::Half", "float"}), OpFloat::kOther);
  EXPECT_EQ(float_type_of(V{"c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float"}), OpFloat::kOther);
  EXPECT_EQ(float_type_of(V{"double"}), OpFloat::kOther);
  EXPECT_EQ(float_type_of(V{"long int", "Scalar", ""}), OpFloat::kNone);
  EXPECT_EQ(float_type_of(V{}), OpFloat::kNone);
}

TEST(LaunchPrecision, MatmulKernelNamesThatSayTheirType) {
  // Kernel names as cuBLAS / CUTLASS / PyTorch wrote them in real traces.
  EXPECT_EQ(matmul_name_float_type("sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x256x32_warpgroupsize2x1x1_"
                                   "execute_segment_k_off_kernel__5x_cublas"),
            OpFloat::kFloat32);
  EXPECT_EQ(matmul_name_float_type("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_32x4_nn_align1>"),
            OpFloat::kFloat32);
  EXPECT_EQ(matmul_name_float_type("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1"),
            OpFloat::kOther);
  EXPECT_EQ(matmul_name_float_type("void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_"
                                   "align8>"),
            OpFloat::kOther);
  EXPECT_EQ(matmul_name_float_type("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn"), OpFloat::kOther);
  EXPECT_EQ(matmul_name_float_type("sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n_tilesize128x128x128"), OpFloat::kOther);
  // Names that say nothing: the launching op decides.
  EXPECT_EQ(matmul_name_float_type("nvjet_tst_128x256_64x4_2x1_v_bz_coopA_NTN"), OpFloat::kNone);
  EXPECT_EQ(matmul_name_float_type("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel"
                                   "<float, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)"),
            OpFloat::kNone);
  EXPECT_EQ(matmul_name_float_type("ampere_sgemm_128x64_nn"), OpFloat::kNone);
}

}  // namespace
}  // namespace stepscope::diagnose
