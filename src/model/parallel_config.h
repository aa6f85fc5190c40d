// One way to lay a training job out on GPUs: the parallel split, the
// micro-batching, the recomputation policy and how optimizer state is
// sharded. Shared by the memory model, the step-time model and the
// configuration search (which enumerates these).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stepscope::model {

// Activation recomputation (Korthikanti et al. 2022): none keeps every
// activation; selective recomputes the attention core (softmax, dropout,
// QK^T, attention over V) in the backward pass; full keeps only each layer's
// input and recomputes the whole layer forward. op is per-operator selective
// checkpointing as torchtitan ships it (selective_ac_option = "op"): inside
// each layer the outputs of attention and of every second matmul are saved
// (Q, V, gate/FC1 and FC2 projections), everything else is recomputed.
enum class Recompute : uint8_t { kNone, kSelective, kFull, kOp };

// How weights, gradients and optimizer states are split across the
// data-parallel group: DDP replicates all; ZeRO-1 shards optimizer states
// (= Megatron's distributed optimizer); ZeRO-2 also gradients; ZeRO-3 (=
// FSDP full shard) also weights; FSDP hybrid shard is ZeRO-3 within a node
// and replication across nodes.
enum class Sharding : uint8_t { kDdp, kZero1, kZero2, kZero3, kFsdpHybrid };

struct ParallelConfig {
  int tp = 1;              // tensor-parallel size (Megatron column/row split)
  int pp = 1;              // pipeline-parallel stages
  int dp = 1;              // data-parallel replicas
  int cp = 1;              // context-parallel size (sequence split across GPUs)
  int ep = 1;              // expert-parallel size: MoE experts split over ep of the dp × cp ranks
  int vpp = 1;             // virtual pipeline stages per GPU (interleaved 1F1B when > 1)
  int micro_batch = 1;     // sequences per micro-batch
  bool sequence_parallel = false;  // Megatron sequence parallelism (needs tp > 1 to matter)
  Recompute recompute = Recompute::kNone;
  Sharding sharding = Sharding::kDdp;
  bool cpu_offload = false;  // optimizer states (and master weights) in host memory
  // Uneven pipeline stages (Megatron's --decoder-first/last-pipeline-num-layers,
  // torchtitan's first/last stage with fewer layers to make room for the
  // embedding and the loss): layers of the first and last stage; 0 = the even
  // split layers / pp. The middle stages share the rest evenly.
  int first_stage_layers = 0, last_stage_layers = 0;
  // Megatron's --account-for-embedding-in-pipeline-split and
  // --account-for-loss-in-pipeline-split: the embedding (loss) counts as one
  // layer of the first (last) stage when the layers are split evenly, so
  // that stage gets one transformer layer fewer; (layers + the accounted
  // ends) must divide by pp. Exclusive with explicit stage layer counts.
  bool embedding_stage = false, loss_stage = false;
  // Layers of each stage under `recompute` (Megatron's --recompute-num-layers,
  // torchtitan's layer-level option: every n-th layer); the others keep
  // everything. 0 = all of them.
  int recompute_layers = 0;
  // Layers of each stage whose saved activations wait in host memory between
  // forward and backward (Megatron --cpu-offloading-num-layers, activation
  // offloading in torchao / torchtitan); 0 = none.
  int offload_layers = 0;

  int gpus() const { return tp * pp * dp * cp; }
};

std::string_view to_string(Recompute r);
std::string_view to_string(Sharding s);
// Parses "none|selective|full|op" and "ddp|zero1|zero2|zero3|fsdp|fsdp_hybrid|distributed_optimizer"
// ("fsdp" = zero3, "distributed_optimizer" = zero1); false on anything else.
bool parse_recompute(std::string_view text, Recompute& out);
bool parse_sharding(std::string_view text, Sharding& out);

}  // namespace stepscope::model
