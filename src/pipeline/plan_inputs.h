// What every `plan` front end (the CLI's subcommands, Python's plan and
// plan_search) is given before anything is predicted: a model and a GPU by
// name, the training settings and a layout, as text and numbers, unchecked.
// Resolving them here, once, is what makes the fronts refuse the same inputs
// with the same words.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/cluster_spec.h"
#include "model/model_spec.h"
#include "model/parallel_config.h"
#include "model/training_settings.h"

namespace stepscope::pipeline {

// An input the planner refuses. `option` is the input's name as Python spells
// it ("global_batch"; several joined by '/': "tp/pp/dp/cp"), or "" when the
// message names what it is about itself (a file, the whole configuration).
// The CLI shows "--global-batch: MESSAGE" (plan_problem_line), Python
// "global_batch: MESSAGE".
struct PlanProblem {
  PlanProblem() = default;
  PlanProblem(std::string option_name, std::string text, std::string about_file = {})
      : option(std::move(option_name)), message(std::move(text)), file(std::move(about_file)) {}
  std::string option;
  std::string message;
  std::string file;  // the model or hardware-profile file the message is about, if any
  bool ok() const { return message.empty(); }
};

// The model, the GPU and the settings shared by every plan question.
struct ModelInputs {
  std::string model;            // a preset (gpt3-175b, llama3-70b, ...) or a model JSON file
  std::string gpu = "h100-sxm"; // catalog name, used when `profile` is empty
  std::string profile;          // a hardware profile JSON (docs/planner.md) instead of the catalog
  int global_batch = 0;         // sequences per step; 0 = the question's default (left 0 by resolve)
  int seq = 0;                  // tokens per sequence; 0 = the model's own
  int activation_bits = 16;     // 16, 8 or 4
  std::string dtype = "bf16", optimizer = "adamw", attention = "flash";
  std::string stack = "megatron";       // megatron | pytorch (model/training_settings.h)
  bool compiled = false;                // torch.compile over each block
  bool tp_overlap = false;              // TP collectives overlapped with GEMMs (async TP)
  bool fp8_all_gather = false;          // FSDP gathers fp8 weights
  std::string optimizer_impl = "auto";  // auto | foreach | fused
  double moe_capacity_factor = 0;       // MoE expert capacity factor; 0 = dropless
  bool moe_pad_to_capacity = false;     // experts run on their full capacity
  bool cuda_graphs = false;             // kernels replayed from CUDA graphs
  std::string fp8_impl = "auto";        // auto | te | torchao: who casts fp8 GEMM operands
  bool fsdp_flat_params = false;        // FSDP1 flat parameters (no copy-out after each gather)
  bool reshard_after_forward = true;    // FSDP frees gathered weights after forward (false: SHARD_GRAD_OP)
  double attention_density = 0;         // block-sparse attention: live share of block pairs; 0 = causal
};

// One layout written out (plan, recompute, pareto).
struct LayoutInputs {
  int tp = 1, pp = 1, dp = 1, cp = 1, vpp = 1, ep = 1;
  bool sequence_parallel = false, cpu_offload = false;
  std::string sharding = "ddp";
  int first_stage_layers = 0, last_stage_layers = 0;  // 0 = layers / pp
  bool account_for_embedding = false, account_for_loss = false;  // the ends count as a stage layer
};

// The layout's sizes, flags and sharding into `p` (each size within
// model::LayoutLimits, their products too).
PlanProblem apply_layout(const LayoutInputs& in, model::ParallelConfig& p);

// Model (preset or file, with `seq` if given), cluster of `gpus` GPUs
// (catalog or profile) and settings. A global batch of 0 stays 0 in `t`: the
// caller fills its own default. A GPU name the catalog approximates (a
// memory size its row does not have) adds a line to `notes`.
PlanProblem resolve_model_inputs(const ModelInputs& in, int gpus, model::ModelSpec& m, model::TrainingSettings& t,
                                 model::ClusterSpec& c, std::vector<std::string>* notes = nullptr);

// "--global-batch: MESSAGE", "--tp/--pp/--dp/--cp: MESSAGE" or MESSAGE alone.
std::string plan_problem_line(const PlanProblem& p);

}  // namespace stepscope::pipeline
