// Memory per GPU of one training job: model states (weights, gradients,
// optimizer states) under each sharding scheme and stack, activations per
// Korthikanti et al. 2022 (fused kernels) or as eager PyTorch modules save
// them, transient buffers, the peak over the phases of a step, and what the
// caching allocator and the CUDA context hold beyond it.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/cluster_spec.h"
#include "model/model_spec.h"
#include "model/parallel_config.h"
#include "model/training_settings.h"

namespace stepscope::model {

// When in a step the allocated memory peaks (docs/planner.md "Memory").
// kSteady: every part is live at once (the Megatron stack, whose gradient
// buffers persist); the other three are the candidate peaks of the PyTorch
// stack, whose gradients exist only from backward to zero_grad.
enum class MemoryPeak : uint8_t { kSteady, kBackwardStart, kBackwardEnd, kOptimizerStep };
std::string_view to_string(MemoryPeak p);

// Documented constants of the allocator and the device (docs/planner.md
// "Memory", each with its measurement).
struct MemoryConstants {
  // Peak reserved / peak allocated − 1 of the caching allocator: the median
  // of 16 FSDP2 training runs on the H200 (workloads/plan_memory/
  // h200_2026-12-04: 1.054 to 1.263, median 1.16).
  static constexpr double kAllocatorReserve = 0.16;
  // Device memory used outside PyTorch's allocator: CUDA context, cuBLAS /
  // cuDNN workspaces, NCCL (the same 1.39 GB in all 16 runs).
  static constexpr double kContextBytes = 1.39e9;
  // Datasheet GB are binary in practice; the driver keeps a little: the
  // H200's 141 GB give 150 109 880 320 B to CUDA = 0.9915 × 141 GiB.
  static constexpr double kUsableFraction = 0.9915;
};

// Every field in bytes (1 GB = 1e9 B) for the most loaded GPU (the pipeline
// stage with the largest total), at the moment of the peak.
struct MemoryEstimate {
  double params_per_gpu = 0;  // parameters held by this GPU before sharding (count, not bytes)
  double weights = 0;         // persistent weights (sharded under ZeRO-3/FSDP) + live 16-bit compute copies
  double gradients = 0;       // gradients live at the peak (sharded under ZeRO-2/3)
  double optimizer = 0;       // optimizer states: fp32 master (Megatron) + moments (0 on GPU with CPU offload)
  double activations = 0;     // saved activations of all in-flight micro-batches
  double temporary = 0;       // transient buffers: loss gradients, gathered layers, comm buckets, optimizer temporaries
  double total = 0;           // peak allocated: torch.cuda.max_memory_allocated()
  double reserve = 0;         // cached by the allocator beyond the live tensors at the peak
  double reserved = 0;        // total + reserve: torch.cuda.max_memory_reserved()
  double context = 0;         // outside PyTorch's allocator (CUDA context, library workspaces)
  double capacity = 0;        // device memory CUDA can hand out
  double headroom = 0;        // capacity - reserved - context (negative: does not fit)
  bool fits = false;
  int stage = 0;  // which pipeline stage these figures are for (0 = first)
  MemoryPeak peak = MemoryPeak::kSteady;
};

// Bytes of optimizer state per parameter (K of the ZeRO paper). Megatron
// stack: fp32 master copy + moments (Adam/AdamW 12, SGD with momentum 8);
// PyTorch stack: the moments only (8 / 4), the fp32 parameter being the master.
double optimizer_bytes_per_param(const TrainingSettings& t);

// The MLP width one token passes through: ffn_hidden, or for MoE the routed
// experts' (top-k × expert width × the routed share under a capacity factor)
// plus the shared experts'.
double mlp_width_per_token(const ModelSpec& m, const TrainingSettings& t);

// Saved-activation bytes of one transformer layer for one micro-batch
// (Korthikanti et al. 2022 Section 4, generalised to GQA / gated MLP /
// no dropout; flash attention stores no scores), or what eager PyTorch
// modules save (TrainingSettings::eager_activations).
double layer_activation_bytes(const ModelSpec& m, const TrainingSettings& t, const ParallelConfig& p);

MemoryEstimate estimate_memory(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c,
                               const ParallelConfig& p);

// The same figures for one pipeline stage, 0 (first) to pp - 1 (last); for
// pp = 1 both are the one stage. estimate_memory is the most loaded of the
// first, second and last.
MemoryEstimate estimate_stage_memory(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c,
                                     const ParallelConfig& p, int stage);

}  // namespace stepscope::model
