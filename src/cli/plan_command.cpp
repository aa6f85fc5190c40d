// `stepscope plan`: memory per GPU and step time of a training layout;
// `stepscope plan validate FILE.csv`: the models against published runs.
// Other `plan` subcommands register on the returned App (commands.h).
#include <fmt/core.h>

#include <CLI/CLI.hpp>

#include "cli/messages.h"
#include "cli/output_file.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/plan_cli_inputs.h"
#include "pipeline/plan_run.h"
#include "model/plan_constraints.h"
#include "report/plan_report.h"

namespace stepscope::cli {

using model::AttentionKernel;
using model::Dtype;
using model::LayoutLimits;
using model::parse_attention;
using model::parse_dtype;

namespace {

struct PlanArgs : pipeline::PlanInputs {
  std::string json_path, overlap_dp_flag = "on";
  bool explain = false;
};

struct ValidateArgs {
  std::string csv, json_path, attention, overlap_dp, dtype, unknown_micro_batch = "one";
};

int fail(const std::string& message) {
  print_error(message);
  return 2;
}

int run_plan(const PlanArgs& a) {
  report::AtomicOutput json_out;
  if (!open_output(a.json_path, json_out)) return 2;
  pipeline::PlanInputs in = a;
  in.overlap_dp = a.overlap_dp_flag == "on";
  const pipeline::PlannedLayout planned = pipeline::plan_layout(in);
  if (!planned.problem.ok()) return fail(pipeline::plan_problem_line(planned.problem));
  if (json_out.ok() && !finish_output(json_out, report::plan_json(planned.result))) return 2;
  if (a.json_path != "-" && !write_stdout(report::plan_text(planned.result, a.explain))) return 2;
  return 0;
}

int run_validate(const ValidateArgs& a) {
  using namespace plan;
  report::AtomicOutput json_out;
  if (!open_output(a.json_path, json_out)) return 2;
  ValidationOptions o;
  if (!a.attention.empty()) {
    AttentionKernel k;
    if (!parse_attention(a.attention, k)) return fail("--attention: expected flash, fa2 or unfused");
    o.attention = k;
  }
  if (!a.dtype.empty()) {
    Dtype d;
    if (!parse_dtype(a.dtype, d)) return fail("--dtype: expected bf16, fp16, fp8, mxfp8 or nvfp4");
    o.dtype = d;
  }
  if (!a.overlap_dp.empty()) o.overlap_dp_comm = a.overlap_dp == "on";
  o.unknown_micro_batch = a.unknown_micro_batch == "one" ? ValidationOptions::UnknownMicroBatch::kOne
                                                         : ValidationOptions::UnknownMicroBatch::kFastestFitting;
  std::string error;
  auto rows = read_validation_csv(a.csv, o, error);
  if (!rows) return fail(error);
  const ValidationSummary summary = validate_rows(*rows, o);
  // A row that cannot be predicted is named and skipped; the others run.
  for (const auto& k : summary.skipped) print_warning(fmt::format("{}: {}; skipped", a.csv, k.reason));
  if (summary.results.empty())
    return fail(fmt::format("{}: no row could be predicted ({} skipped)", a.csv, summary.skipped.size()));
  if (json_out.ok() && !finish_output(json_out, report::validation_json(summary))) return 2;
  if (a.json_path != "-" && !write_stdout(report::validation_text(summary))) return 2;
  return 0;
}

}  // namespace

CLI::App* register_plan(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  using model::LayoutLimits;
  const CLI::Validator size = whole_number(1, LayoutLimits::kSize);
  auto* cmd = app.add_subcommand("plan", "predict memory per GPU and step time of a training layout");
  cmd->require_subcommand(0, 1);
  cmd->add_option("--model", args->model, "preset (gpt3-175b, llama2-70b, llama3-405b, ...) or model JSON file");
  cmd->add_option("--gpu", args->gpu, gpu_option_help());
  cmd->add_option("--gpus", args->gpus, "GPUs of the job (default tp × pp × dp × cp)")
      ->check(whole_number(1, LayoutLimits::kGpus));
  cmd->add_option("--tp", args->layout.tp, "tensor-parallel size")->check(size);
  cmd->add_option("--pp", args->layout.pp, "pipeline stages")->check(size);
  cmd->add_option("--dp", args->layout.dp, "data-parallel replicas (default: the GPUs --gpus leaves, else 1)")
      ->check(size);
  cmd->add_option("--cp", args->layout.cp, "context-parallel size")->check(size);
  cmd->add_option("--ep", args->layout.ep, "expert-parallel size (MoE models: experts over ep of the dp × cp ranks)")
      ->check(size);
  cmd->add_option("--vpp", args->layout.vpp, "virtual pipeline stages per GPU (interleaved 1F1B when > 1)")->check(size);
  cmd->add_option("--micro-batch", args->micro_batch, "sequences per micro-batch")->check(size);
  cmd->add_option("--global-batch", args->global_batch, "sequences per step (default dp × micro-batch)")
      ->check(whole_number(1, LayoutLimits::kGlobalBatch));
  cmd->add_option("--seq", args->seq, "tokens per sequence (default: the model's own, printed)")
      ->check(whole_number(1, model::ModelLimits::kSeq));
  cmd->add_option("--recompute", args->recompute, "none, selective, full or op (per-operator, torchtitan)");
  cmd->add_option("--sharding", args->layout.sharding, "ddp, zero1, zero2, zero3, fsdp, fsdp_hybrid (hsdp), distributed_optimizer");
  cmd->add_flag("--sequence-parallel", args->layout.sequence_parallel, "Megatron sequence parallelism");
  cmd->add_flag("--cpu-offload", args->layout.cpu_offload, "optimizer states in host memory");
  cmd->add_option("--first-stage-layers", args->layout.first_stage_layers,
                  "layers of the first pipeline stage (default layers / pp; the other stages share the rest)");
  cmd->add_option("--last-stage-layers", args->layout.last_stage_layers, "layers of the last pipeline stage");
  cmd->add_flag("--account-for-embedding", args->layout.account_for_embedding,
                "the embedding counts as a layer of the first stage (Megatron --account-for-embedding-in-pipeline-split)");
  cmd->add_flag("--account-for-loss", args->layout.account_for_loss,
                "the loss counts as a layer of the last stage (Megatron --account-for-loss-in-pipeline-split)");
  cmd->add_option("--offload-layers", args->offload_layers,
                  "layers per stage whose saved activations wait in host memory (Megatron --cpu-offloading-num-layers)");
  cmd->add_option("--recompute-layers", args->recompute_layers,
                  "layers per stage under --recompute (Megatron --recompute-num-layers; default all)");
  add_settings(cmd, *args);
  cmd->add_option("--overlap-dp", args->overlap_dp_flag, "overlap data-parallel communication with backward: on|off")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_flag("--grad-fp32", args->grad_fp32, "accumulate and reduce gradients in fp32");
  cmd->add_option("--profile", args->profile, "hardware profile JSON (docs/planner.md) instead of the catalog");
  cmd->add_flag("--explain", args->explain, "print the per-layer breakdown");
  cmd->add_option("--json", args->json_path, "write JSON to FILE ('-' for stdout)");
  cmd->callback([cmd, args] {
    args->dp_from_gpus = cmd->count("--dp") == 0;
    if (cmd->get_subcommands().empty()) set_exit_code(run_plan(*args));
  });

  auto vargs = std::make_shared<ValidateArgs>();
  auto* v = cmd->add_subcommand("validate", "predict published runs (CSV) and report the errors");
  v->add_option("csv", vargs->csv, "rows in the format of shared/planner/validation_public.csv")->required();
  v->add_option("--json", vargs->json_path, "write JSON to FILE ('-' for stdout)");
  v->add_option("--attention", vargs->attention,
                "flash or unfused for every row without an 'attention' column (default: by row, docs/planner.md)");
  v->add_option("--overlap-dp", vargs->overlap_dp, "data-parallel overlap for every row: on|off (default: by row)")
      ->check(CLI::IsMember({"on", "off"}));
  v->add_option("--dtype", vargs->dtype, "bf16, fp16 or fp8 for every row without a 'dtype' column (default: by row)");
  v->add_option("--unknown-micro-batch", vargs->unknown_micro_batch,
                "micro-batch for rows that say 'unknown': one (default) or fastest (fastest that fits memory)")
      ->check(CLI::IsMember({"one", "fastest"}));
  v->callback([vargs] { set_exit_code(run_validate(*vargs)); });
  return cmd;
}

}  // namespace stepscope::cli
