#include "pipeline/plan_inputs.h"

#include <fmt/core.h>

#include <cstdint>
#include <filesystem>

#include "model/gpu_lookup.h"
#include "model/hardware_profile_json.h"
#include "model/model_lookup.h"
#include "model/plan_constraints.h"

namespace stepscope::pipeline {

// The specs and cost models of the model layer (src/model/).
using namespace model;

PlanProblem apply_layout(const LayoutInputs& in, model::ParallelConfig& p) {
  p.tp = in.tp, p.pp = in.pp, p.dp = in.dp, p.cp = in.cp, p.vpp = in.vpp, p.ep = in.ep;
  p.sequence_parallel = in.sequence_parallel, p.cpu_offload = in.cpu_offload;
  const struct {
    const char* name;
    int value;
  } sizes[] = {{"tp", in.tp}, {"pp", in.pp}, {"dp", in.dp}, {"cp", in.cp}, {"vpp", in.vpp}, {"ep", in.ep}};
  for (const auto& s : sizes)
    if (s.value < 1 || s.value > LayoutLimits::kSize)
      return {s.name, fmt::format("expected a whole number from 1 to {}, got {}", LayoutLimits::kSize, s.value)};
  // Each size is at most 2^20: the products are taken in 64 bits and refused
  // past the planner's limits before any int uses them.
  if (const int64_t gpus = int64_t{p.tp} * p.pp * p.dp * p.cp; gpus > LayoutLimits::kGpus)
    return {"tp/pp/dp/cp", fmt::format("tp × pp × dp × cp = {} GPUs, more than {}", gpus, LayoutLimits::kGpus)};
  if (const int64_t stages = int64_t{p.pp} * p.vpp; stages > LayoutLimits::kSize)
    return {"pp/vpp", fmt::format("pp × vpp = {}, more than {}", stages, LayoutLimits::kSize)};
  for (const auto& [name, value] : {std::pair{"first_stage_layers", in.first_stage_layers},
                                    std::pair{"last_stage_layers", in.last_stage_layers}})
    if (value < 0 || value > ModelLimits::kLayers)
      return {name, fmt::format("expected a whole number of layers from 0 to {}, got {}", ModelLimits::kLayers, value)};
  p.first_stage_layers = in.first_stage_layers, p.last_stage_layers = in.last_stage_layers;
  p.embedding_stage = in.account_for_embedding, p.loss_stage = in.account_for_loss;
  if (!model::parse_sharding(in.sharding, p.sharding))
    return {"sharding", "expected ddp, zero1, zero2, zero3, fsdp, fsdp_hybrid, hsdp or distributed_optimizer"};
  return {};
}

PlanProblem resolve_model_inputs(const ModelInputs& in, int gpus, model::ModelSpec& m, model::TrainingSettings& t,
                                 model::ClusterSpec& c, std::vector<std::string>* notes) {
  if (in.model.empty()) return {"model", "required: a preset such as gpt3-175b or llama3-70b, or a model JSON file"};
  {
    std::string error;
    auto found = lookup_model(in.model, error);
    // A file's own error names the file; a name that is neither is the option's.
    std::error_code ec;
    if (!found) return std::filesystem::exists(in.model, ec) ? PlanProblem{"", error, in.model} : PlanProblem{"model", error};
    m = *found;
  }
  if (!in.profile.empty()) {
    std::string error;
    auto loaded = load_hardware_profile(in.profile, error);
    if (!loaded) return {"", error, in.profile};
    c = *loaded;
  } else {
    const GpuSpec* gpu = find_gpu(in.gpu);
    if (!gpu) return {"gpu", unplanned_gpu_message(in.gpu)};
    if (const GpuMatch match = lookup_gpu(in.gpu); !match.approximation.empty() && notes)
      notes->push_back(match.approximation);
    c.gpu = *gpu;
  }
  if (in.seq != 0) {
    if (in.seq < 1 || in.seq > model::ModelLimits::kSeq)
      return {"seq", fmt::format("expected a whole number of tokens from 1 to {}, got {}", model::ModelLimits::kSeq,
                                 in.seq)};
    m.seq = in.seq;
  }
  c.gpus = gpus;
  if (in.global_batch < 0 || in.global_batch > LayoutLimits::kGlobalBatch)
    return {"global_batch",
            fmt::format("expected a whole number of sequences from 1 to {}, got {}", LayoutLimits::kGlobalBatch,
                        in.global_batch)};
  t.global_batch = in.global_batch;
  if (in.activation_bits != 16 && in.activation_bits != 8 && in.activation_bits != 4)
    return {"activation_bits", "expected 16, 8 or 4"};
  t.activation_bits = in.activation_bits;
  if (!parse_dtype(in.dtype, t.dtype)) return {"dtype", "expected bf16, fp16, fp8, mxfp8 or nvfp4"};
  if (!parse_optimizer(in.optimizer, t.optimizer)) return {"optimizer", "expected adam, adamw or sgd"};
  if (!parse_attention(in.attention, t.attention)) return {"attention", "expected flash, fa2 or unfused"};
  if (!parse_stack(in.stack, t.stack)) return {"stack", "expected megatron or pytorch"};
  if (!parse_optimizer_impl(in.optimizer_impl, t.optimizer_impl))
    return {"optimizer_impl", "expected auto, foreach or fused"};
  if (in.compiled && t.stack != model::Stack::kPytorch)
    return {"compile", "torch.compile is a setting of the pytorch stack (--stack pytorch)"};
  t.compiled = in.compiled;
  t.tp_comm_overlap = in.tp_overlap;
  t.fp8_all_gather = in.fp8_all_gather;
  // A factor above the expert count would let one expert take every token copy.
  if (!(in.moe_capacity_factor >= 0 && in.moe_capacity_factor <= model::ModelLimits::kExperts))
    return {"moe_capacity_factor", fmt::format("expected 0 (dropless) or a factor up to {}", model::ModelLimits::kExperts)};
  if ((in.moe_capacity_factor > 0 || in.moe_pad_to_capacity) && !m.is_moe())
    return {in.moe_capacity_factor > 0 ? "moe_capacity_factor" : "moe_pad_to_capacity",
            fmt::format("model {} has no experts", m.name)};
  if (in.moe_pad_to_capacity && in.moe_capacity_factor <= 0)
    return {"moe_pad_to_capacity", "needs a capacity factor (--moe-capacity-factor)"};
  t.moe_capacity_factor = in.moe_capacity_factor;
  t.moe_pad_to_capacity = in.moe_pad_to_capacity;
  t.cuda_graphs = in.cuda_graphs;
  t.fsdp_flat_params = in.fsdp_flat_params;
  t.reshard_after_forward = in.reshard_after_forward;
  if (!(in.attention_density >= 0 && in.attention_density <= 1))
    return {"attention_density", "expected a share of block pairs above 0 and at most 1"};
  t.attention_density = in.attention_density;
  if (!parse_fp8_impl(in.fp8_impl, t.fp8_impl)) return {"fp8_impl", "expected auto, te or torchao"};
  return {};
}

std::string plan_problem_line(const PlanProblem& p) {
  if (p.option.empty()) return p.message;
  // "tp/pp/dp/cp" -> "--tp/--pp/--dp/--cp", "global_batch" -> "--global-batch".
  std::string flags = "--";
  for (char ch : p.option) {
    if (ch == '/') flags += "/--";
    else flags += ch == '_' ? '-' : ch;
  }
  return flags + ": " + p.message;
}

}  // namespace stepscope::pipeline
