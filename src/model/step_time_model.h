// Time of one optimizer step: per-layer compute from FLOPs and the GEMM
// shape model, memory-bound kernels, attention, tensor/pipeline/data-parallel
// communication, the pipeline bubble, recomputation and the optimizer.
#pragma once

#include "model/cluster_spec.h"
#include "model/collective_model.h"
#include "model/model_spec.h"
#include "model/parallel_config.h"
#include "model/training_settings.h"

namespace stepscope::model {

// Seconds of one micro-batch through one transformer layer on one GPU.
struct LayerTime {
  double gemm_fwd = 0;       // linear layers forward (QKV, projection, MLP)
  double gemm_bwd = 0;       // their backward (data + weight gradients)
  double attention_fwd = 0;  // attention core forward (scores, softmax, dropout, ·V; or one fused kernel)
  double attention_bwd = 0;
  double elementwise_fwd = 0;  // norms, bias/activation, dropout, residual adds (HBM-bound)
  double elementwise_bwd = 0;
  double tp_comm_fwd = 0;  // tensor-parallel collectives in forward (2 per layer)
  double tp_comm_bwd = 0;
  double recompute = 0;        // forward work repeated in backward (selective: attention core; full: everything)
  double cp_comm = 0;          // context-parallel K/V exchange not hidden behind attention
  double grad_accumulate = 0;  // adding this micro-batch's weight gradients into the gradient buffer
  double cast_fwd = 0;         // low-precision recipes: casting GEMM inputs and weights (amax, scale, transpose)
  double cast_bwd = 0;         // and the output gradients
  double ep_comm_fwd = 0;      // MoE: token dispatch and combine all-to-alls (not overlapped)
  double ep_comm_bwd = 0;
  double shard_copy_fwd = 0;   // FSDP2: copying the gathered weights out of the all-gather buffer
  double shard_copy_bwd = 0;   // and again for backward's gather
  double launch_fwd = 0;       // host time to issue this layer's kernels in forward (dispatch + launch)
  double launch_bwd = 0;       // and in backward; the GPU waits only where it exceeds the layer's GPU time
  double offload_fwd = 0;      // activation offload: the copy to host not hidden behind the layer's forward
  double offload_bwd = 0;      // and the copy back, behind its backward (averaged over the stage's layers)
  double fwd() const {
    return gemm_fwd + attention_fwd + elementwise_fwd + tp_comm_fwd + cast_fwd + ep_comm_fwd + offload_fwd +
           shard_copy_fwd;
  }
  double bwd() const {
    return gemm_bwd + attention_bwd + elementwise_bwd + tp_comm_bwd + recompute + cp_comm + grad_accumulate + cast_bwd +
           ep_comm_bwd + offload_bwd + shard_copy_bwd;
  }
  double total() const { return fwd() + bwd(); }
};

// Ring attention over cp ranks for one layer and micro-batch: what the K/V
// exchange adds beyond the attention compute, and the memory-bound merges of
// the per-step partial results (docs/planner.md "Context parallelism").
// `tokens` are this rank's (b · s / cp); `q_width` and `kv_width` the query
// and K+V elements per token on this GPU; core_* the layer's attention
// compute. The Megatron stack is Transformer Engine's P2P ring, the PyTorch
// stack torch's context_parallel (all-gather rotation).
struct ContextParallelTime {
  double exposed_comm = 0;
  double merge_fwd = 0, merge_bwd = 0;
};
ContextParallelTime context_parallel_time(double tokens, double q_width, double kv_width, double cp, double core_fwd,
                                          double core_bwd, Stack stack, const CommGroup& ring, const ClusterSpec& c);

struct StepEstimate {
  int micro_batches = 0;       // per pipeline per step (global / (dp × micro_batch))
  double layer_flops_fwd = 0;  // model FLOPs of one layer forward, one micro-batch, whole TP group
  double model_flops = 0;      // model FLOPs of the step, all GPUs (no recomputation counted)
  double hardware_flops = 0;   // including recomputation
  LayerTime layer;             // one layer, one micro-batch
  // Per step, seconds, on the critical path of the slowest pipeline stage:
  double compute_fwd = 0;  // GEMMs, elementwise, casts, FSDP copies forward (no comm, no attention)
  double compute_bwd = 0;
  double attention = 0;  // attention core fwd + bwd
  double recompute = 0;
  double tp_comm = 0;
  double ep_comm = 0;  // MoE all-to-alls
  double offload = 0;  // activation copies to and from host memory not hidden behind compute
  double launch = 0;   // host-bound layers: kernel issue time the GPU waits for
  double cp_comm = 0;
  double pp_p2p = 0;              // pipeline sends/receives on the critical path
  double embedding_and_loss = 0;  // embedding, logits GEMMs, cross-entropy, their TP collectives and gradient adds
  double bubble = 0;              // pipeline fill and drain
  double dp_comm_total = 0;       // data-parallel gradient reduction (and ZeRO-3 gathers), whole
  double dp_comm_exposed = 0;     // the part not hidden behind backward
  double optimizer = 0;
  double total = 0;
  double bubble_fraction = 0;  // bubble / (total pipeline time)
  double model_tflops_per_gpu = 0;
  double mfu = 0;  // model FLOP/s per GPU / peak
};

// Seconds of one micro-batch in the parts of the model outside the layers:
// the embedding (first pipeline stage) and the output projection with the
// loss (last stage), each with its tensor-parallel collectives and the
// accumulation of its weight gradient into the gradient buffer.
struct EndStageTime {
  double embed_fwd = 0;      // lookup (+ positions, dropout); TP: all-reduce (SP: reduce-scatter) of its output
  double embed_bwd = 0;      // dense V/t × h gradient: zero-fill, scatter-add, accumulate into the buffer
  double output_fwd = 0;     // logits GEMM, fp32 cross-entropy and its three TP all-reduces (SP: + all-gather)
  double output_bwd = 0;     // logits gradients, input-gradient all-reduce (SP: reduce-scatter), accumulation
  double tp_comm = 0;        // the collectives among the above, first and last stage together
  double grad_accumulate = 0;  // the weight-gradient accumulation among the above, both stages
};
EndStageTime estimate_end_stages(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c,
                                 const ParallelConfig& p);

// Kernels one layer issues per micro-batch (docs/planner.md "Host launch").
struct KernelCount {
  double fwd = 0, bwd = 0;
};
KernelCount layer_kernels(const ModelSpec& m, const TrainingSettings& t, const ParallelConfig& p);
// Host seconds to issue one kernel: an eager PyTorch dispatch and launch
// (10 µs, measured on the project's H200), or a CUDA-graph replay's (1 µs).
double launch_seconds(const TrainingSettings& t);

// Bytes the optimizer step moves per parameter (all its streaming passes).
double optimizer_pass_bytes(const TrainingSettings& t);

// Pipeline bubble as a fraction of the ideal (no-bubble) time: 0 for p = 1;
// (p-1)/m for GPipe and 1F1B; (p-1)/(v·m) interleaved.
double bubble_fraction(int pp, int micro_batches, int vpp);

// Model FLOPs of one layer forward for one micro-batch of `micro_batch`
// sequences (whole layer, not divided by TP): QKV, attention core, projection, MLP.
double layer_forward_flops(const ModelSpec& m, int micro_batch);

LayerTime estimate_layer(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c, const ParallelConfig& p);
StepEstimate estimate_step(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c,
                           const ParallelConfig& p);

}  // namespace stepscope::model
