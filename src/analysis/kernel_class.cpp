#include "analysis/kernel_class.h"

#include <array>

#include "analysis/name_patterns.h"

namespace stepscope::analysis {
namespace {

// Class rules, tried in order on the name as written (case matters: vendor
// prefixes are stable). The first rule that matches decides.
using ClassRule = NameRule<KernelClass>;

constexpr std::array kClassRules = {
    // Memory work reported as kernels: 2021 traces name copies "Memcpy ...",
    // MTIA names its DMA transfers "dma_*".
    ClassRule{{Match::kPrefix, "Memcpy"}, KernelClass::kMemory},
    ClassRule{{Match::kPrefix, "Memset"}, KernelClass::kMemory},
    ClassRule{{Match::kPrefix, "dma"}, KernelClass::kMemory},
    // NCCL before 2.19 names kernels "ncclKernel_<Op>_<Algo>_<Proto>_<RedOp>_<type>",
    // 2.19+ "ncclDevKernel_<Op>_...". RCCL on ROCm keeps the ncclKernel names;
    // some builds and MSCCL add their own prefixes.
    ClassRule{{Match::kPrefix, "ncclKernel"}, KernelClass::kCommunication},
    ClassRule{{Match::kPrefix, "ncclDevKernel"}, KernelClass::kCommunication},
    ClassRule{{Match::kPrefix, "nccl"}, KernelClass::kCommunication},
    ClassRule{{Match::kPrefix, "rccl"}, KernelClass::kCommunication},
    ClassRule{{Match::kPrefix, "msccl"}, KernelClass::kCommunication},
    ClassRule{{Match::kPrefix, "hccl"}, KernelClass::kCommunication},    // Huawei HCCL
    // NVSHMEM's device and host-launched kernels: nvshmem_*, nvshmemx_*,
    // nvshmemi_* (NVSHMEM API naming: nvshmem = public, nvshmemx = extensions,
    // nvshmemi = internal).
    ClassRule{{Match::kPrefix, "nvshmem"}, KernelClass::kCommunication},
    // DeepEP's expert-parallel all-to-all (github.com/deepseek-ai/DeepEP,
    // csrc/kernels/intranode.cu, internode.cu, internode_ll.cu): kernels live
    // in namespaces deep_ep::intranode (notify_dispatch, dispatch, combine,
    // cached_notify_*, barrier), deep_ep::internode and deep_ep::internode_ll.
    // deep_ep::layout::get_dispatch_layout only counts tokens: computation.
    ClassRule{{Match::kContains, "deep_ep::intranode::"}, KernelClass::kCommunication},
    ClassRule{{Match::kContains, "deep_ep::internode"}, KernelClass::kCommunication},
    // PyTorch symmetric memory (torch/csrc/distributed/c10d/symm_mem/
    // CUDASymmetricMemoryOps.cu): multimem_all_reduce_kernel,
    // multimem_one_shot_reduce_kernel, multimem_all_gather_kernel (NVLS
    // multicast), one_shot_all_reduce_kernel, two_shot_all_reduce_kernel,
    // and the c10d::symmetric_memory barrier / signal kernels.
    ClassRule{{Match::kContains, "multimem_"}, KernelClass::kCommunication},
    ClassRule{{Match::kContains, "one_shot_all_reduce"}, KernelClass::kCommunication},
    ClassRule{{Match::kContains, "two_shot_all_reduce"}, KernelClass::kCommunication},
    ClassRule{{Match::kContains, "symmetric_memory::"}, KernelClass::kCommunication},
    // PyTorch's NVSHMEM all-to-all-v (symm_mem/nvshmem_extension.cu):
    // c10d::nvshmem_extension::allToAllV, exchangeSplitAndOffset*, allToAllV_2d.
    ClassRule{{Match::kContains, "nvshmem_extension::"}, KernelClass::kCommunication},
    ClassRule{{Match::kContains, "gloo:"}, KernelClass::kCommunication},
    ClassRule{{Match::kContains, "cross_device_reduce"}, KernelClass::kCommunication},  // custom all-reduce
    ClassRule{{Match::kContains, "userbuffers"}, KernelClass::kCommunication},          // TE comm overlap
    // Device-side synchronisation drawn as GPU work (HTA's OTHER: "...Sync").
    ClassRule{{Match::kPrefix, "Sync"}, KernelClass::kOther},
    ClassRule{{Match::kSuffix, "Sync"}, KernelClass::kOther},
    ClassRule{{Match::kSuffix, "Synchronize"}, KernelClass::kOther},
};

// Family rules for computation kernels, tried in order with ASCII case
// ignored. Order matters: attention and convolution kernels often contain
// "gemm" (cuDNN's implicit-GEMM convolutions, sdpa GEMMs), so they come first;
// torch.compile's Triton kernels come before all since their names embed the
// fused ops ("triton_per_fused_native_layer_norm").
using FamilyRule = NameRule<KernelFamily>;

constexpr std::array kFamilyRules = {
    FamilyRule{{Match::kPrefix, "triton"}, KernelFamily::kTriton},
    // attention
    FamilyRule{{Match::kContains, "flash"}, KernelFamily::kAttention},
    FamilyRule{{Match::kContains, "fmha"}, KernelFamily::kAttention},
    FamilyRule{{Match::kContains, "sdpa"}, KernelFamily::kAttention},
    FamilyRule{{Match::kContains, "attention"}, KernelFamily::kAttention},
    FamilyRule{{Match::kContains, "_mha"}, KernelFamily::kAttention},
    FamilyRule{{Match::kContains, "mha_"}, KernelFamily::kAttention},
    FamilyRule{{Match::kContains, "cudnn::fusion::"}, KernelFamily::kAttention},  // cuDNN sdpa helpers
    // convolution
    FamilyRule{{Match::kContains, "convolution"}, KernelFamily::kConvolution},
    FamilyRule{{Match::kContains, "implicit_gemm"}, KernelFamily::kConvolution},
    FamilyRule{{Match::kContains, "implicitgemmconv"}, KernelFamily::kConvolution},
    FamilyRule{{Match::kContains, "fprop"}, KernelFamily::kConvolution},
    FamilyRule{{Match::kContains, "dgrad"}, KernelFamily::kConvolution},
    FamilyRule{{Match::kContains, "wgrad"}, KernelFamily::kConvolution},
    FamilyRule{{Match::kContains, "winograd"}, KernelFamily::kConvolution},
    FamilyRule{{Match::kContains, "scudnn"}, KernelFamily::kConvolution},
    FamilyRule{{Match::kContains, "hcudnn"}, KernelFamily::kConvolution},
    // cuDNN's tensor-core convolutions: <arch>_<type><MMA shape>cudnn_...
    // (volta_h884cudnn_*, volta_fp16_s884cudnn_fp16_*, turing_s1688cudnn_fp16_*).
    FamilyRule{{Match::kContains, "884cudnn"}, KernelFamily::kConvolution},
    FamilyRule{{Match::kContains, "1688cudnn"}, KernelFamily::kConvolution},
    FamilyRule{{Match::kContains, "16816cudnn"}, KernelFamily::kConvolution},
    FamilyRule{{Match::kContains, "fft2d"}, KernelFamily::kConvolution},
    FamilyRule{{Match::kContains, "cask_cudnn"}, KernelFamily::kConvolution},
    FamilyRule{{Match::kContains, "conv2d"}, KernelFamily::kConvolution},
    FamilyRule{{Match::kContains, "miopen"}, KernelFamily::kConvolution},
    // matrix multiply
    FamilyRule{{Match::kContains, "gemm"}, KernelFamily::kGemm},
    FamilyRule{{Match::kContains, "gemv"}, KernelFamily::kGemm},
    FamilyRule{{Match::kPrefix, "nvjet"}, KernelFamily::kGemm},
    FamilyRule{{Match::kContains, "cutlass"}, KernelFamily::kGemm},
    FamilyRule{{Match::kPrefix, "cijk_"}, KernelFamily::kGemm},  // rocBLAS / Tensile
    FamilyRule{{Match::kContains, "xmma"}, KernelFamily::kGemm},
    FamilyRule{{Match::kContains, "splitkreduce"}, KernelFamily::kGemm},  // cuBLAS split-K epilogue
    FamilyRule{{Match::kContains, "cublas"}, KernelFamily::kGemm},
    FamilyRule{{Match::kContains, "matmul"}, KernelFamily::kGemm},
    FamilyRule{{Match::kContains, "dot_kernel"}, KernelFamily::kGemm},
    FamilyRule{{Match::kPrefix, "fc-"}, KernelFamily::kGemm},  // MTIA fully connected
    // normalisation and softmax
    FamilyRule{{Match::kContains, "layer_norm"}, KernelFamily::kNorm},
    FamilyRule{{Match::kContains, "layernorm"}, KernelFamily::kNorm},
    FamilyRule{{Match::kContains, "rms_norm"}, KernelFamily::kNorm},
    FamilyRule{{Match::kContains, "rmsnorm"}, KernelFamily::kNorm},
    FamilyRule{{Match::kContains, "batch_norm"}, KernelFamily::kNorm},
    FamilyRule{{Match::kContains, "batchnorm"}, KernelFamily::kNorm},
    FamilyRule{{Match::kContains, "group_norm"}, KernelFamily::kNorm},
    FamilyRule{{Match::kContains, "bn_fw"}, KernelFamily::kNorm},
    FamilyRule{{Match::kContains, "bn_bw"}, KernelFamily::kNorm},
    FamilyRule{{Match::kContains, "gammabetabackward"}, KernelFamily::kNorm},
    FamilyRule{{Match::kContains, "rowwisemoments"}, KernelFamily::kNorm},
    FamilyRule{{Match::kContains, "softmax"}, KernelFamily::kNorm},
    // optimizers
    FamilyRule{{Match::kContains, "multi_tensor_apply"}, KernelFamily::kOptimizer},
    FamilyRule{{Match::kContains, "adam"}, KernelFamily::kOptimizer},
    FamilyRule{{Match::kContains, "adagrad"}, KernelFamily::kOptimizer},
    FamilyRule{{Match::kContains, "sgd"}, KernelFamily::kOptimizer},
    FamilyRule{{Match::kContains, "fused_optim"}, KernelFamily::kOptimizer},
    // reductions, scans, sorts
    FamilyRule{{Match::kContains, "reduce"}, KernelFamily::kReduction},
    FamilyRule{{Match::kContains, "cub::"}, KernelFamily::kReduction},
    FamilyRule{{Match::kContains, "scan"}, KernelFamily::kReduction},
    FamilyRule{{Match::kContains, "sort"}, KernelFamily::kReduction},
    FamilyRule{{Match::kContains, "nll_loss"}, KernelFamily::kReduction},
    FamilyRule{{Match::kContains, "cumsum"}, KernelFamily::kReduction},
    FamilyRule{{Match::kContains, "argmax"}, KernelFamily::kReduction},
    FamilyRule{{Match::kContains, "topk"}, KernelFamily::kReduction},
    FamilyRule{{Match::kContains, "_norm"}, KernelFamily::kReduction},  // vector / matrix norms
    FamilyRule{{Match::kContains, "mean"}, KernelFamily::kReduction},
    // elementwise, copies, indexing
    FamilyRule{{Match::kContains, "elementwise"}, KernelFamily::kElementwise},
    FamilyRule{{Match::kContains, "copy"}, KernelFamily::kElementwise},
    FamilyRule{{Match::kContains, "fill"}, KernelFamily::kElementwise},
    FamilyRule{{Match::kContains, "index"}, KernelFamily::kElementwise},
    FamilyRule{{Match::kContains, "gather"}, KernelFamily::kElementwise},
    FamilyRule{{Match::kContains, "scatter"}, KernelFamily::kElementwise},
    FamilyRule{{Match::kContains, "embedding"}, KernelFamily::kElementwise},
    FamilyRule{{Match::kContains, "dropout"}, KernelFamily::kElementwise},
    FamilyRule{{Match::kContains, "pool"}, KernelFamily::kElementwise},
    FamilyRule{{Match::kContains, "nchwtonhwc"}, KernelFamily::kElementwise},
    FamilyRule{{Match::kContains, "nhwctonchw"}, KernelFamily::kElementwise},
    FamilyRule{{Match::kContains, "permute"}, KernelFamily::kElementwise},
    FamilyRule{{Match::kContains, "transpose"}, KernelFamily::kElementwise},
    FamilyRule{{Match::kContains, "-dtype_"}, KernelFamily::kElementwise},  // MTIA per-op kernels
};

KernelFamily family_of(std::string_view name) {
  static const NameRules<KernelFamily> rules(kFamilyRules, /*fold_case=*/true);
  // C++ kernel names start with the return type ("void at::native::...").
  static const NamePatterns void_prefix(std::array{NamePattern{Match::kPrefix, "void "}}, /*fold_case=*/true);
  if (void_prefix.first_match(name) == 0) name.remove_prefix(5);
  return rules.match(name).value_or(KernelFamily::kOther);
}

}  // namespace

KernelKind classify_kernel(std::string_view name, trace::EventKind kind) {
  static const NameRules<KernelClass> rules(kClassRules, /*fold_case=*/false);
  if (kind == trace::EventKind::kMemcpy || kind == trace::EventKind::kMemset)
    return {KernelClass::kMemory, KernelFamily::kNotCompute};
  // Prefix rules see the kernel's own name: C++ kernels are written with
  // their return type first ("void nvshmemi_..."), C-style ones without.
  std::string_view own = name;
  if (own.starts_with("void ")) own.remove_prefix(5);
  if (const auto cls = rules.match(own)) return {*cls, KernelFamily::kNotCompute};
  return {KernelClass::kComputation, family_of(name)};
}

std::string_view to_string(KernelClass c) {
  switch (c) {
    case KernelClass::kComputation: return "computation";
    case KernelClass::kCommunication: return "communication";
    case KernelClass::kMemory: return "memory";
    case KernelClass::kOther: return "other";
  }
  return "other";
}

std::string_view to_string(KernelFamily f) {
  switch (f) {
    case KernelFamily::kGemm: return "gemm";
    case KernelFamily::kAttention: return "attention";
    case KernelFamily::kConvolution: return "convolution";
    case KernelFamily::kTriton: return "triton";
    case KernelFamily::kNorm: return "norm";
    case KernelFamily::kOptimizer: return "optimizer";
    case KernelFamily::kReduction: return "reduction";
    case KernelFamily::kElementwise: return "elementwise";
    case KernelFamily::kOther: return "other";
    case KernelFamily::kNotCompute: return "not_compute";
  }
  return "other";
}

}  // namespace stepscope::analysis
