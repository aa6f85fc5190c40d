// Memory per GPU of one training job: model states (weights, gradients,
// optimizer states) under each sharding scheme, activations per Korthikanti
// et al. 2022, temporary buffers, and the headroom left on the device.
#pragma once

#include <cstdint>

#include "model/cluster_spec.h"
#include "model/model_spec.h"
#include "model/parallel_config.h"
#include "model/training_settings.h"

namespace stepscope::model {

// Every field in bytes (1 GB = 1e9 B) for the most loaded GPU (the pipeline
// stage with the largest total).
struct MemoryEstimate {
  double params_per_gpu = 0;  // parameters held by this GPU before sharding (count, not bytes)
  double weights = 0;         // 16-bit weights (sharded under ZeRO-3/FSDP)
  double gradients = 0;       // gradients (sharded under ZeRO-2/3)
  double optimizer = 0;       // fp32 master weights + optimizer moments (0 on GPU with CPU offload)
  double activations = 0;     // saved activations of all in-flight micro-batches
  double temporary = 0;       // transient buffers: fp32 logits, gathered ZeRO-3 layers, comm buckets
  double total = 0;
  double capacity = 0;  // device memory
  double headroom = 0;  // capacity - total (negative: does not fit)
  bool fits = false;
  int stage = 0;  // which pipeline stage these figures are for (0 = first)
};

// Bytes of optimizer state per parameter (K of the ZeRO paper): fp32 master
// copy + moments. Adam/AdamW 12, SGD with momentum 8.
double optimizer_bytes_per_param(const TrainingSettings& t);

// Saved-activation bytes of one transformer layer for one micro-batch
// (Korthikanti et al. 2022 Section 4, generalised to GQA / gated MLP /
// no dropout; flash attention stores no scores).
double layer_activation_bytes(const ModelSpec& m, const TrainingSettings& t, const ParallelConfig& p);

MemoryEstimate estimate_memory(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c,
                               const ParallelConfig& p);

// The same figures for one pipeline stage: 0 (first) or pp - 1 (last); for
// pp = 1 both are the one stage. estimate_memory is the larger of the two.
MemoryEstimate estimate_stage_memory(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c,
                                     const ParallelConfig& p, int stage);

}  // namespace stepscope::model
