// The class and family table on names taken from real traces of each vendor
// and generation.
#include <gtest/gtest.h>

#include "analysis/collectives.h"
#include "analysis/kernel_class.h"

namespace stepscope::analysis {
namespace {

using trace::EventKind;

KernelKind kernel_kind(std::string_view name) { return classify_kernel(name, EventKind::kKernel); }

TEST(KernelClass, CommunicationAcrossNcclGenerations) {
  EXPECT_EQ(kernel_kind("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)").cls, KernelClass::kCommunication);
  EXPECT_EQ(kernel_kind("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)").cls,
            KernelClass::kCommunication);
  EXPECT_EQ(kernel_kind("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)").cls,
            KernelClass::kCommunication);
  EXPECT_EQ(kernel_kind("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)").cls, KernelClass::kCommunication);
  EXPECT_EQ(kernel_kind("rcclGenericKernel").cls, KernelClass::kCommunication);
  EXPECT_EQ(kernel_kind("gloo:all_reduce").cls, KernelClass::kCommunication);
  // A computation kernel merely mentioning nccl in a template argument is not communication.
  EXPECT_EQ(kernel_kind("void at::native::vectorized_elementwise_kernel<4, nccl_helper>").cls,
            KernelClass::kComputation);
}

// Communication kernels without an nccl/rccl prefix, named as their sources
// declare them (DeepEP csrc/kernels/{intranode,internode,internode_ll}.cu,
// PyTorch torch/csrc/distributed/c10d/symm_mem/CUDASymmetricMemoryOps.cu,
// NVSHMEM's nvshmem/nvshmemx/nvshmemi API prefixes) and as CUPTI writes them
// (return type first for C++ kernels).
TEST(KernelClass, CommunicationWithoutANcclPrefix) {
  const char* comm[] = {
      "void deep_ep::intranode::notify_dispatch<8>(int const*, int*, int, int const*, int*, int, int, int, bool "
      "const*, int*, int*, int, int, int**, int)",
      "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*, float*, int*, int*, int4 const*, "
      "float const*, long const*, float const*, bool const*, int const*, int, int, int, int, int, int, int, int, void**, "
      "int, int, int)",
      "void deep_ep::intranode::combine<__nv_bfloat16, 8, 768, 4096>(__nv_bfloat16*, float*, __nv_bfloat16 const*, "
      "float const*, int const*, int const*, int, int, int, int, void**, int, int, int)",
      "void deep_ep::internode::combine<false, 2, 8, 32, 8, 4, 4>(int4*, float*, bool const*, int4 const*, float const*)",
      "void deep_ep::internode_ll::dispatch<false, false, 7168>(void*, float*, int*, long*, int*, int*, void*, int*)",
      "void deep_ep::intranode::cached_notify_combine<8>(void**, int*, int, int, int**, int)",
      "void nvshmemi_transfer_rma_nbi<(nvshmemi_op_t)0>(void*, void*, unsigned long, int)",
      "nvshmemx_barrier_all_on_stream_kernel",
      "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, "
      "unsigned int**, unsigned long, unsigned long)",
      "void (anonymous namespace)::one_shot_all_reduce_kernel<c10::BFloat16, 16, 8>(c10::BFloat16**, c10::BFloat16*, "
      "c10::BFloat16*, unsigned long, unsigned long, unsigned int**, unsigned long, unsigned long)",
      "void (anonymous namespace)::two_shot_all_reduce_kernel<float, 16, 4>(float**, float*, unsigned long, unsigned "
      "long, unsigned int**, unsigned long, unsigned long)",
      "void (anonymous namespace)::multimem_all_gather_kernel<16>(char*, char*, unsigned long, unsigned int**, "
      "unsigned long, unsigned long)",
      "void c10d::symmetric_memory::barrier_kernel(unsigned int**, int, int, unsigned long, unsigned long)",
      "c10d::nvshmem_extension::allToAllV(void*, void*, long*, unsigned long, int)",
      "void c10d::nvshmem_extension::exchangeSplitAndOffset_2d<true>(long*, long*, int, int, unsigned long, bool)",
  };
  for (const char* name : comm) {
    EXPECT_EQ(kernel_kind(name).cls, KernelClass::kCommunication) << name;
    EXPECT_EQ(kernel_kind(name).family, KernelFamily::kNotCompute) << name;
  }
  // DeepEP's layout kernel counts tokens per rank on one GPU: computation.
  EXPECT_EQ(kernel_kind("void deep_ep::layout::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, int*, "
                        "bool*, int, int, int, int, int)")
                .cls,
            KernelClass::kComputation);
}

TEST(KernelClass, MemoryByKindAndByName) {
  EXPECT_EQ(classify_kernel("Memcpy HtoD (Pageable -> Device)", EventKind::kMemcpy).cls, KernelClass::kMemory);
  EXPECT_EQ(classify_kernel("Memset (Device)", EventKind::kMemset).cls, KernelClass::kMemory);
  EXPECT_EQ(classify_kernel("anything", EventKind::kMemcpy).family, KernelFamily::kNotCompute);
  // 2021 traces and MTIA report copies as kernels.
  EXPECT_EQ(kernel_kind("Memcpy DtoD (Device -> Device)").cls, KernelClass::kMemory);
  EXPECT_EQ(kernel_kind("dma_request").cls, KernelClass::kMemory);
  EXPECT_EQ(kernel_kind("Event Sync").cls, KernelClass::kOther);
}

TEST(KernelClass, ComputationFamilies) {
  struct Case {
    const char* name;
    KernelFamily family;
  };
  const Case cases[] = {
      {"sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1", KernelFamily::kGemm},
      {"ampere_sgemm_128x64_nn", KernelFamily::kGemm},
      {"volta_sgemm_64x64_tn", KernelFamily::kGemm},
      {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", KernelFamily::kGemm},
      {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4>(cutlass_80_tensorop)", KernelFamily::kGemm},
      {"Cijk_Ailk_Bjlk_SB_Bias_AS_SAV_UserArgs_MT64x16x16_MI16x16x1_SN_LDSB0", KernelFamily::kGemm},
      {"void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 2, 2, false>", KernelFamily::kGemm},
      {"void splitKreduce_kernel<float, float, float, float, true, false, false>(cublasSplitKParams<float>)",
       KernelFamily::kGemm},
      {"flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4>>", KernelFamily::kAttention},
      {"fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float>)",
       KernelFamily::kAttention},
      {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64", KernelFamily::kAttention},
      {"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw", KernelFamily::kConvolution},
      {"volta_h884cudnn_256x64_ldg8_relu_exp_small_nhwc_tn_v1", KernelFamily::kConvolution},
      {"volta_fp16_s884cudnn_fp16_256x128_ldg8_relu_f2f_exp_small_nhwc2nchw_tn_v1", KernelFamily::kConvolution},
      {"turing_s1688cudnn_fp16_128x128_ldg8_relu_f2f_exp_small_nhwc_tn_v1", KernelFamily::kConvolution},
      {"volta_scudnn_128x64_relu_interior_nn_v1", KernelFamily::kConvolution},
      {"void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*)",
       KernelFamily::kConvolution},
      {"sm80_xmma_dgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc", KernelFamily::kConvolution},
      {"sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc", KernelFamily::kConvolution},
      {"cudnn_volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1", KernelFamily::kConvolution},
      {"_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock",
       KernelFamily::kConvolution},
      {"triton_per_fused__to_copy_add_native_layer_norm_backward_view_11", KernelFamily::kTriton},
      {"triton_tem_fused__to_copy_mm_t_12", KernelFamily::kTriton},
      {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float)",
       KernelFamily::kNorm},
      {"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 128, true, 1>", KernelFamily::kNorm},
      {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
       "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>>",
       KernelFamily::kOptimizer},
      {"void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float, float>",
       KernelFamily::kOptimizer},
      {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float>>>",
       KernelFamily::kReduction},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
       "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
       KernelFamily::kElementwise},
      {"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)"
       "::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>",
       KernelFamily::kElementwise},
      {"some_custom_kernel_nobody_knows", KernelFamily::kOther},
  };
  for (const auto& c : cases) {
    KernelKind k = kernel_kind(c.name);
    EXPECT_EQ(k.cls, KernelClass::kComputation) << c.name;
    EXPECT_EQ(to_string(k.family), to_string(c.family)) << c.name;
  }
}

TEST(CollectiveOp, BothNcclGenerationsGiveTheSameKey) {
  EXPECT_EQ(collective_op_of("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"), "AllReduce");
  EXPECT_EQ(collective_op_of("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            "AllReduce");
  EXPECT_EQ(normalize_op(collective_op_of("ncclDevKernel_AllGather_RING_LL")), "allgather");
  EXPECT_EQ(normalize_op("all_reduce"), normalize_op("AllReduce"));
  EXPECT_EQ(collective_op_of("my_custom_collective(int)"), "my_custom_collective");
}

}  // namespace
}  // namespace stepscope::analysis
