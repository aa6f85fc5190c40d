// `stepscope plan`: memory per GPU and step time of a training layout;
// `stepscope plan validate FILE.csv`: the models against published runs.
// Other `plan` subcommands register on the returned App (commands.h).
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <filesystem>

#include "cli/messages.h"
#include "cli/output_file.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "plan/plan_constraints.h"
#include "plan/plan_report.h"

namespace stepscope::cli {

namespace {

struct PlanArgs {
  std::string model, gpu = "h100-sxm", profile, json_path;
  int gpus = 0, tp = 1, pp = 1, dp = 1, cp = 1, vpp = 1, micro_batch = 1, global_batch = 0, activation_bits = 16;
  std::string recompute = "none", sharding = "ddp", dtype = "bf16", optimizer = "adamw", attention = "flash";
  std::string overlap_dp = "on";
  bool sequence_parallel = false, cpu_offload = false, grad_fp32 = false, explain = false;
};

struct ValidateArgs {
  std::string csv, json_path, attention, overlap_dp, dtype, unknown_micro_batch = "one";
};

int fail(const std::string& message) {
  print_error(message);
  return 2;
}

int run_plan(const PlanArgs& a) {
  using namespace plan;
  report::AtomicOutput json_out;
  if (!open_output(a.json_path, json_out)) return 2;
  if (a.model.empty())
    return fail("plan: --model is required (a preset such as gpt3-175b or llama3-70b, or a JSON file)");
  PlanResult r;
  if (const ModelSpec* preset = find_model_preset(a.model)) {
    r.model = *preset;
  } else if (std::filesystem::exists(a.model)) {
    std::string error;
    auto m = load_model_json(a.model, error);
    if (!m) return fail(error);
    r.model = *m;
  } else {
    return fail(fmt::format("--model: \"{}\" is neither a preset nor a file", a.model));
  }
  if (!a.profile.empty()) {
    std::string error;
    auto c = load_hardware_profile(a.profile, error);
    if (!c) return fail(error);
    r.cluster = *c;
  } else {
    const GpuSpec* gpu = find_gpu(a.gpu);
    if (!gpu)
      return fail(fmt::format("--gpu: unknown GPU \"{}\" (a100-40-sxm, a100-80-sxm, h100-sxm, h200-sxm, b200)", a.gpu));
    r.cluster.gpu = *gpu;
  }
  auto& p = r.parallel;
  p.tp = a.tp, p.pp = a.pp, p.dp = a.dp, p.cp = a.cp, p.vpp = a.vpp, p.micro_batch = a.micro_batch;
  p.sequence_parallel = a.sequence_parallel;
  p.cpu_offload = a.cpu_offload;
  // Each size is at most 2^20 (checked when parsed): the products are taken
  // in 64 bits and refused past the planner's limits before any int uses them.
  const int64_t layout_gpus = int64_t{p.tp} * p.pp * p.dp * p.cp;
  if (layout_gpus > LayoutLimits::kGpus)
    return fail(fmt::format("--tp/--pp/--dp/--cp: tp × pp × dp × cp = {} GPUs, more than {}", layout_gpus,
                            LayoutLimits::kGpus));
  if (int64_t{p.pp} * p.vpp > LayoutLimits::kSize)
    return fail(fmt::format("--pp/--vpp: pp × vpp = {}, more than {}", int64_t{p.pp} * p.vpp, LayoutLimits::kSize));
  const int64_t per_step = int64_t{p.dp} * p.micro_batch;
  if (a.global_batch == 0 && per_step > LayoutLimits::kGlobalBatch)
    return fail(fmt::format("--global-batch: dp × micro-batch = {} is more than {}; give it explicitly", per_step,
                            LayoutLimits::kGlobalBatch));
  r.cluster.gpus = a.gpus > 0 ? a.gpus : static_cast<int>(layout_gpus);
  if (!parse_recompute(a.recompute, p.recompute)) return fail("--recompute: expected none, selective or full");
  if (!parse_sharding(a.sharding, p.sharding))
    return fail("--sharding: expected ddp, zero1, zero2, zero3, fsdp, fsdp_hybrid or distributed_optimizer");
  auto& t = r.settings;
  t.global_batch = a.global_batch > 0 ? a.global_batch : static_cast<int>(per_step);
  t.activation_bits = a.activation_bits;
  t.grad_fp32 = a.grad_fp32;
  t.overlap_dp_comm = a.overlap_dp == "on";
  if (!parse_dtype(a.dtype, t.dtype)) return fail("--dtype: expected bf16, fp16 or fp8");
  if (!parse_optimizer(a.optimizer, t.optimizer)) return fail("--optimizer: expected adam, adamw or sgd");
  if (!parse_attention(a.attention, t.attention)) return fail("--attention: expected flash or unfused");
  auto problems = check_constraints(r.model, t, r.cluster, p);
  if (!problems.empty()) {
    std::string joined;
    for (const auto& s : problems) joined += (joined.empty() ? "" : "; ") + s;
    return fail("invalid configuration: " + joined);
  }
  r.memory = estimate_memory(r.model, t, r.cluster, p);
  r.step = estimate_step(r.model, t, r.cluster, p);
  if (json_out.ok() && !finish_output(json_out, plan_json(r))) return 2;
  if (a.json_path != "-" && !write_stdout(plan_text(r, a.explain))) return 2;
  return 0;
}

int run_validate(const ValidateArgs& a) {
  using namespace plan;
  report::AtomicOutput json_out;
  if (!open_output(a.json_path, json_out)) return 2;
  ValidationOptions o;
  if (!a.attention.empty()) {
    AttentionKernel k;
    if (!parse_attention(a.attention, k)) return fail("--attention: expected flash or unfused");
    o.attention = k;
  }
  if (!a.dtype.empty()) {
    Dtype d;
    if (!parse_dtype(a.dtype, d)) return fail("--dtype: expected bf16, fp16 or fp8");
    o.dtype = d;
  }
  if (!a.overlap_dp.empty()) o.overlap_dp_comm = a.overlap_dp == "on";
  o.unknown_micro_batch = a.unknown_micro_batch == "one" ? ValidationOptions::UnknownMicroBatch::kOne
                                                         : ValidationOptions::UnknownMicroBatch::kFastestFitting;
  std::string error;
  auto rows = read_validation_csv(a.csv, o, error);
  if (!rows) return fail(error);
  auto summary = validate_rows(*rows, o, error);
  if (!summary) return fail(fmt::format("{}: {}", a.csv, error));
  if (json_out.ok() && !finish_output(json_out, validation_json(*summary))) return 2;
  if (a.json_path != "-" && !write_stdout(validation_text(*summary))) return 2;
  return 0;
}

}  // namespace

CLI::App* register_plan(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  using plan::LayoutLimits;
  const CLI::Validator size = whole_number(1, LayoutLimits::kSize);
  auto* cmd = app.add_subcommand("plan", "predict memory per GPU and step time of a training layout");
  cmd->require_subcommand(0, 1);
  cmd->add_option("--model", args->model, "preset (gpt3-175b, llama2-70b, llama3-405b, ...) or model JSON file");
  cmd->add_option("--gpu", args->gpu, "a100-40-sxm, a100-80-sxm, h100-sxm (default), h200-sxm, b200");
  cmd->add_option("--gpus", args->gpus, "GPUs of the job (default tp × pp × dp × cp)")
      ->check(whole_number(1, LayoutLimits::kGpus));
  cmd->add_option("--tp", args->tp, "tensor-parallel size")->check(size);
  cmd->add_option("--pp", args->pp, "pipeline stages")->check(size);
  cmd->add_option("--dp", args->dp, "data-parallel replicas")->check(size);
  cmd->add_option("--cp", args->cp, "context-parallel size")->check(size);
  cmd->add_option("--vpp", args->vpp, "virtual pipeline stages per GPU (interleaved 1F1B when > 1)")->check(size);
  cmd->add_option("--micro-batch", args->micro_batch, "sequences per micro-batch")->check(size);
  cmd->add_option("--global-batch", args->global_batch, "sequences per step (default dp × micro-batch)")
      ->check(whole_number(1, LayoutLimits::kGlobalBatch));
  cmd->add_option("--recompute", args->recompute, "none, selective or full");
  cmd->add_option("--sharding", args->sharding, "ddp, zero1, zero2, zero3, fsdp, fsdp_hybrid, distributed_optimizer");
  cmd->add_flag("--sequence-parallel", args->sequence_parallel, "Megatron sequence parallelism");
  cmd->add_flag("--cpu-offload", args->cpu_offload, "optimizer states in host memory");
  cmd->add_option("--dtype", args->dtype, "bf16, fp16 or fp8");
  cmd->add_option("--optimizer", args->optimizer, "adam, adamw or sgd");
  cmd->add_option("--activation-bits", args->activation_bits, "saved-activation precision: 16, 8 or 4")
      ->check(whole_number(4, 16));
  cmd->add_option("--attention", args->attention, "flash (default) or unfused");
  cmd->add_option("--overlap-dp", args->overlap_dp, "overlap data-parallel communication with backward: on|off")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_flag("--grad-fp32", args->grad_fp32, "accumulate and reduce gradients in fp32");
  cmd->add_option("--profile", args->profile, "hardware profile JSON (docs/planner.md) instead of the catalog");
  cmd->add_flag("--explain", args->explain, "print the per-layer breakdown");
  cmd->add_option("--json", args->json_path, "write JSON to FILE ('-' for stdout)");
  cmd->callback([cmd, args] {
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
