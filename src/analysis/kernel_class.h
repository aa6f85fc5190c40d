// What kind of GPU work an activity is, decided from its name and store kind by
// one ordered rule table (kernel_class.cpp), so every analysis agrees.
#pragma once

#include <cstdint>
#include <string_view>

#include "trace/event_kind.h"

namespace stepscope::analysis {

// Coarse class, as HTA reports it (COMPUTATION / COMMUNICATION / MEMORY / OTHER).
enum class KernelClass : uint8_t {
  kComputation,    // any kernel that is not one of the classes below
  kCommunication,  // collective / point-to-point kernels (NCCL, RCCL, HCCL, MTIA, gloo)
  kMemory,         // memcpy / memset activities (and kernels named Memcpy*/Memset*/dma*)
  kOther,          // device-side synchronisation drawn as work ("... Sync")
};
constexpr int kKernelClassCount = 4;

// Finer family for computation kernels; non-computation work gets kNotCompute.
enum class KernelFamily : uint8_t {
  kGemm,         // matrix multiply: cuBLAS/cuBLASLt (sm90_xmma_gemm, ampere_sgemm, nvjet), cutlass, gemv, rocBLAS Cijk_
  kAttention,    // flash / fused / memory-efficient attention (flash_fwd, fmha, sdpa, cudnn mha)
  kConvolution,  // cuDNN / MIOpen convolution (implicit_gemm conv, fprop, dgrad, wgrad, winograd)
  kTriton,       // Triton-generated kernels (triton_*), e.g. from torch.compile
  kNorm,         // layer/batch/group/RMS norm and softmax
  kOptimizer,    // optimizer steps (multi_tensor_apply, adam, sgd)
  kReduction,    // reductions and scans (reduce_kernel, cub scans, sort)
  kElementwise,  // elementwise / copy / fill / index kernels
  kOther,        // a computation kernel no rule recognises
  kNotCompute,   // the activity is communication, memory or other
};
constexpr int kKernelFamilyCount = 10;

struct KernelKind {
  KernelClass cls = KernelClass::kComputation;
  KernelFamily family = KernelFamily::kOther;
};

// Classifies one GPU activity. `kind` is the store's EventKind (kMemcpy/kMemset
// are always memory); `name` is the kernel name as written in the trace.
KernelKind classify_kernel(std::string_view name, trace::EventKind kind);

std::string_view to_string(KernelClass c);   // "computation", "communication", "memory", "other"
std::string_view to_string(KernelFamily f);  // "gemm", "attention", ... "not_compute"

}  // namespace stepscope::analysis
