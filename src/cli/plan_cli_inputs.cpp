#include "cli/plan_cli_inputs.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cli/option_checks.h"
#include "model/cluster_spec.h"
#include "model/plan_constraints.h"

namespace stepscope::cli {

int plan_input_error(const std::string& message) {
  fmt::print(stderr, "stepscope: error: {}\n", message);
  return 2;
}

int plan_input_error(const pipeline::PlanProblem& problem) {
  return plan_input_error(pipeline::plan_problem_line(problem));
}

std::string gpu_option_help() {
  std::string names;
  for (const auto& g : model::gpu_catalog()) names += (names.empty() ? "" : ", ") + g.name;
  return "the GPU (default h100-sxm): " + names;
}

void add_settings(CLI::App* cmd, pipeline::ModelInputs& a) {
  cmd->add_option("--dtype", a.dtype, "bf16, fp16, fp8, mxfp8 or nvfp4");
  cmd->add_option("--optimizer", a.optimizer, "adam, adamw or sgd");
  cmd->add_option("--attention", a.attention, "flash (default: the Megatron stack's fused kernels), fa2 (FlashAttention-2, PyTorch SDPA's flash backend) or unfused");
  cmd->add_option("--stack", a.stack,
                  "megatron (default: TE/Apex kernels, persistent gradient buffers) or pytorch (FSDP2/DDP, eager modules)");
  cmd->add_flag("--compile", a.compiled, "torch.compile over each block (pytorch stack): fused activations");
  cmd->add_flag("--fp8-all-gather", a.fp8_all_gather, "FSDP all-gathers fp8 weights (torchao enable_fsdp_float8_all_gather)");
  cmd->add_flag("--tp-overlap", a.tp_overlap,
                "TP collectives overlapped with their GEMMs (Megatron --tp-comm-overlap, torchtitan async TP; needs SP)");
  cmd->add_option("--optimizer-impl", a.optimizer_impl, "auto (the stack's default), foreach or fused");
  cmd->add_option("--fp8-impl", a.fp8_impl,
                  "who casts fp8 GEMM operands: auto (the stack's), te (Transformer Engine, fused) or torchao (eager unless --compile)");
  cmd->add_option("--moe-capacity-factor", a.moe_capacity_factor,
                  "MoE: tokens an expert takes, as a multiple of its balanced share (Megatron --moe-expert-capacity-factor; default dropless)")
      ->check(number_above(0, model::ModelLimits::kExperts));
  cmd->add_flag("--moe-pad-to-capacity", a.moe_pad_to_capacity, "MoE: experts run on their full capacity, padding included");
  cmd->add_flag("--fsdp-flat-params", a.fsdp_flat_params,
                "FSDP1 flat parameters (llm-foundry, Accelerate): gathered weights need no copy-out (pytorch stack)");
  cmd->add_flag("--no-reshard-after-forward{false}", a.reshard_after_forward,
                "FSDP keeps each layer gathered from forward to backward (reshard_after_forward=False, SHARD_GRAD_OP)");
  cmd->add_option("--attention-density", a.attention_density,
                  "block-sparse attention: the share of (query, key) block pairs computed (default: dense causal, 0.5)")
      ->check(number_above(0, 1));
  cmd->add_flag("--cuda-graphs", a.cuda_graphs,
                "kernels replayed from CUDA graphs (Megatron --cuda-graph-impl, torch.compile reduce-overhead): 1 µs host time per kernel, not 10");
  cmd->add_option("--activation-bits", a.activation_bits, "saved-activation precision: 16, 8 or 4")
      ->check(whole_number(4, 16));
}

void add_common(CLI::App* cmd, CommonArgs& a) {
  cmd->add_option("--model", a.model, "preset (gpt3-175b, llama3-70b, ...) or model JSON file")->required();
  cmd->add_option("--gpu", a.gpu, gpu_option_help());
  cmd->add_option("--profile", a.profile, "hardware profile JSON instead of the catalog");
  cmd->add_option("--global-batch", a.global_batch, "sequences per step")
      ->check(whole_number(1, model::LayoutLimits::kGlobalBatch));
  cmd->add_option("--seq", a.seq, "tokens per sequence (default: the model's own)")
      ->check(whole_number(1, model::ModelLimits::kSeq));
  add_settings(cmd, a);
  cmd->add_option("--json", a.json_path, "write JSON to FILE ('-' for stdout)");
}

void add_layout(CLI::App* cmd, LayoutArgs& a) {
  const CLI::Validator size = whole_number(1, model::LayoutLimits::kSize);
  cmd->add_option("--tp", a.tp, "tensor-parallel size")->check(size);
  cmd->add_option("--pp", a.pp, "pipeline stages")->check(size);
  cmd->add_option("--dp", a.dp, "data-parallel replicas")->check(size);
  cmd->add_option("--cp", a.cp, "context-parallel size")->check(size);
  cmd->add_option("--ep", a.ep, "expert-parallel size (MoE models)")->check(size);
  cmd->add_option("--vpp", a.vpp, "virtual pipeline stages per GPU")->check(size);
  cmd->add_option("--sharding", a.sharding, "ddp, zero1, zero2, zero3, fsdp, fsdp_hybrid (hsdp)");
  cmd->add_flag("--sequence-parallel", a.sequence_parallel, "Megatron sequence parallelism");
  cmd->add_flag("--cpu-offload", a.cpu_offload, "optimizer states in host memory");
  cmd->add_option("--first-stage-layers", a.first_stage_layers, "layers of the first pipeline stage (default layers / pp)");
  cmd->add_option("--last-stage-layers", a.last_stage_layers, "layers of the last pipeline stage");
  cmd->add_flag("--account-for-embedding", a.account_for_embedding,
                "the embedding counts as a layer of the first stage (Megatron --account-for-embedding-in-pipeline-split)");
  cmd->add_flag("--account-for-loss", a.account_for_loss,
                "the loss counts as a layer of the last stage (Megatron --account-for-loss-in-pipeline-split)");
}

}  // namespace stepscope::cli
