#include "plan/search_evaluator.h"

#include "model/memory_model.h"
#include "model/step_time_model.h"

namespace stepscope::plan {

// The specs and cost models of the model layer (src/model/).
using namespace model;

SearchSpace search_space_for(const ModelSpec& model, const TrainingSettings& settings, const ClusterSpec& cluster) {
  SearchSpace s;
  s.gpus = cluster.gpus;
  s.gpus_per_node = cluster.gpu.gpus_per_node;
  s.layers = model.layers;
  s.attention_heads = model.heads;
  s.sequence_length = model.seq;
  s.global_batch = settings.global_batch;
  // Selective recomputation rebuilds the attention scores in backward; a
  // flash-attention kernel never stores them and already recomputes them, so
  // under flash "selective" is "none" in both cost models (same memory, same
  // time) and would only list every layout twice.
  if (settings.attention != AttentionKernel::kUnfused) s.recomputes = {Recompute::kNone, Recompute::kFull};
  // PyTorch training checkpoints per operator too (torchtitan's "op"
  // policy): between none and full in both memory and time.
  if (settings.stack == Stack::kPytorch)
    s.recomputes.insert(s.recomputes.begin() + 1, Recompute::kOp);
  return s;
}

Evaluator model_evaluator(const ModelSpec& model, const TrainingSettings& settings, const ClusterSpec& cluster) {
  return [model, settings, cluster](const ParallelConfig& p) {
    // The model-shape rules of check_constraints that the generic search does
    // not know (it checks heads, layers, batch and GPU count itself).
    if ((model.kv_heads > 0 && model.kv_heads % p.tp != 0 && p.tp % model.kv_heads != 0) ||
        (model.ffn_hidden > 0 && model.ffn_hidden % p.tp != 0) || (model.seq > 0 && model.seq % p.cp != 0) ||
        (model.is_moe() && model.expert_ffn() % p.tp != 0))
      return Evaluation{};
    const MemoryEstimate mem = estimate_memory(model, settings, cluster, p);
    Evaluation e;
    e.fits = mem.fits;
    e.memory_bytes = mem.total;
    // The step model only matters for layouts that fit; skipping it for the
    // rest keeps the search fast where memory rules most layouts out.
    if (mem.fits) e.step_seconds = estimate_step(model, settings, cluster, p).total;
    return e;
  };
}

}  // namespace stepscope::plan
