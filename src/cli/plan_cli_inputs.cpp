#include "cli/plan_cli_inputs.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <filesystem>

#include "cli/option_checks.h"
#include "plan/plan_constraints.h"

namespace stepscope::cli {

int plan_input_error(const std::string& message) {
  fmt::print(stderr, "stepscope: error: {}\n", message);
  return 2;
}

void add_common(CLI::App* cmd, CommonArgs& a) {
  cmd->add_option("--model", a.model, "preset (gpt3-175b, llama3-70b, ...) or model JSON file")->required();
  cmd->add_option("--gpu", a.gpu, "a100-40-sxm, a100-80-sxm, h100-sxm (default), h200-sxm, b200");
  cmd->add_option("--profile", a.profile, "hardware profile JSON instead of the catalog");
  cmd->add_option("--global-batch", a.global_batch, "sequences per step")
      ->check(whole_number(1, plan::LayoutLimits::kGlobalBatch));
  cmd->add_option("--dtype", a.dtype, "bf16, fp16 or fp8");
  cmd->add_option("--optimizer", a.optimizer, "adam, adamw or sgd");
  cmd->add_option("--attention", a.attention, "flash (default) or unfused");
  cmd->add_option("--activation-bits", a.activation_bits, "saved-activation precision: 16, 8 or 4")
      ->check(whole_number(4, 16));
  cmd->add_option("--json", a.json_path, "write JSON to FILE ('-' for stdout)");
}

void add_layout(CLI::App* cmd, LayoutArgs& a) {
  const CLI::Validator size = whole_number(1, plan::LayoutLimits::kSize);
  cmd->add_option("--tp", a.tp, "tensor-parallel size")->check(size);
  cmd->add_option("--pp", a.pp, "pipeline stages")->check(size);
  cmd->add_option("--dp", a.dp, "data-parallel replicas")->check(size);
  cmd->add_option("--cp", a.cp, "context-parallel size")->check(size);
  cmd->add_option("--vpp", a.vpp, "virtual pipeline stages per GPU")->check(size);
  cmd->add_option("--sharding", a.sharding, "ddp, zero1, zero2, zero3, fsdp, fsdp_hybrid");
  cmd->add_flag("--sequence-parallel", a.sequence_parallel, "Megatron sequence parallelism");
  cmd->add_flag("--cpu-offload", a.cpu_offload, "optimizer states in host memory");
}

std::string apply_layout(const LayoutArgs& a, plan::ParallelConfig& p) {
  p.tp = a.tp, p.pp = a.pp, p.dp = a.dp, p.cp = a.cp, p.vpp = a.vpp;
  p.sequence_parallel = a.sequence_parallel, p.cpu_offload = a.cpu_offload;
  if (p.tp < 1 || p.pp < 1 || p.dp < 1 || p.cp < 1 || p.vpp < 1) return "--tp/--pp/--dp/--cp/--vpp: must be at least 1";
  // Each is at most 2^20 (checked when parsed); their product is taken in int later.
  if (const int64_t gpus = int64_t{p.tp} * p.pp * p.dp * p.cp; gpus > plan::LayoutLimits::kGpus)
    return fmt::format("--tp/--pp/--dp/--cp: tp × pp × dp × cp = {} GPUs, more than {}", gpus, plan::LayoutLimits::kGpus);
  if (const int64_t stages = int64_t{p.pp} * p.vpp; stages > plan::LayoutLimits::kSize)
    return fmt::format("--pp/--vpp: pp × vpp = {}, more than {}", stages, plan::LayoutLimits::kSize);
  if (!plan::parse_sharding(a.sharding, p.sharding))
    return "--sharding: expected ddp, zero1, zero2, zero3, fsdp or fsdp_hybrid";
  return "";
}

std::string resolve(const CommonArgs& a, int gpus, plan::ModelSpec& m, plan::TrainingSettings& t, plan::ClusterSpec& c) {
  using namespace plan;
  if (const ModelSpec* preset = find_model_preset(a.model)) {
    m = *preset;
  } else if (std::filesystem::exists(a.model)) {
    std::string error;
    auto loaded = load_model_json(a.model, error);
    if (!loaded) return error;
    m = *loaded;
  } else {
    return fmt::format("--model: \"{}\" is neither a preset nor a file", a.model);
  }
  if (!a.profile.empty()) {
    std::string error;
    auto loaded = load_hardware_profile(a.profile, error);
    if (!loaded) return error;
    c = *loaded;
  } else {
    const GpuSpec* gpu = find_gpu(a.gpu);
    if (!gpu) return fmt::format("--gpu: unknown GPU \"{}\"", a.gpu);
    c.gpu = *gpu;
  }
  c.gpus = gpus;
  if (a.global_batch < 1) return "--global-batch: must be a positive number of sequences";
  t.global_batch = a.global_batch;
  t.activation_bits = a.activation_bits;
  if (a.activation_bits != 16 && a.activation_bits != 8 && a.activation_bits != 4)
    return "--activation-bits: expected 16, 8 or 4";
  if (!parse_dtype(a.dtype, t.dtype)) return "--dtype: expected bf16, fp16 or fp8";
  if (!parse_optimizer(a.optimizer, t.optimizer)) return "--optimizer: expected adam, adamw or sgd";
  if (!parse_attention(a.attention, t.attention)) return "--attention: expected flash or unfused";
  return "";
}

}  // namespace stepscope::cli
