// Exhaustive search over parallel layouts for a GPU count: every valid
// ParallelConfig (tp, pp, dp, cp, virtual stages, micro-batch, recompute,
// sharding, sequence parallelism) is scored by a caller-supplied evaluator and
// the k fastest that fit memory are kept. The search knows nothing about the
// cost models: they come in through the evaluator, so it is tested against a
// small analytical model and used with the real ones (search_evaluator.h).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "model/parallel_config.h"

namespace stepscope::plan {

using model::ParallelConfig;
using model::Recompute;
using model::Sharding;

// What the evaluator says about one layout.
struct Evaluation {
  bool fits = false;        // peak memory per GPU within the device's capacity
  double step_seconds = 0;  // one optimizer step
  double memory_bytes = 0;  // peak memory per GPU
};

// The space to search. Lists that are empty take the defaults noted.
struct SearchSpace {
  int gpus = 1;
  int gpus_per_node = 8;     // tp stays inside a node (divides this)
  int layers = 1;            // transformer layers (divisible by pp * vpp)
  int attention_heads = 1;   // divisible by tp
  int sequence_length = 1;   // tokens per sequence; divisible by 2 * cp when cp > 1
  int global_batch = 1;      // sequences per step; divisible by dp * micro_batch
  std::vector<int> micro_batches;  // default 1, 2, 4, 8, 16
  std::vector<int> vpps;           // default 1, 2, 4
  int max_cp = 8;                  // cp in powers of two up to this
  std::vector<Recompute> recomputes;  // default none, selective, full
  std::vector<Sharding> shardings;    // default ddp, zero1, zero2, zero3, fsdp_hybrid
  bool try_sequence_parallel = true;  // also try sequence_parallel when tp > 1
  bool try_cpu_offload = false;       // also try optimizer states in host memory (ZeRO-Offload)
};

struct RankedConfig {
  ParallelConfig config;
  Evaluation evaluation;
  double tokens_per_second = 0;  // global_batch * sequence_length / step_seconds
};

struct SearchResult {
  std::vector<RankedConfig> top;  // fastest first; ties: less memory, then enumeration order
  int64_t candidates = 0;         // valid layouts evaluated
  int64_t fitting = 0;            // of which fit memory
};

using Evaluator = std::function<Evaluation(const ParallelConfig&)>;

// Why a layout is not valid for the space, or nullptr when it is. The rules:
// gpus == tp*pp*dp*cp; tp divides gpus_per_node and heads; layers divisible by
// pp*vpp; vpp > 1 needs pp > 1 and micro-batch count divisible by pp
// (Megatron's interleaved schedule); global batch divisible by dp*micro_batch;
// cp > 1 needs sequence divisible by 2*cp (load-balanced ring attention);
// sequence parallelism needs tp > 1; sharding other than DDP needs dp > 1;
// ZeRO-2/3 and FSDP do not combine with pp > 1 (DeepSpeed and Megatron reject
// it: gradients are reduced per micro-batch there); hybrid shard needs the
// data-parallel group to span more than one node; CPU offload needs a ZeRO
// stage (ZeRO-Offload moves the sharded optimizer states).
const char* invalid_reason(const SearchSpace& space, const ParallelConfig& c);

// Calls visit(config) for every valid layout, in a fixed order; returns the count.
int64_t for_each_config(const SearchSpace& space, const std::function<void(const ParallelConfig&)>& visit);

SearchResult search_configs(const SearchSpace& space, const Evaluator& evaluate, int k);

}  // namespace stepscope::plan
