// Options shared by the `plan` subcommands that build a model, training
// settings and a cluster from the command line (search, recompute, pareto,
// sharding), and their one-line error convention (exit 2).
#pragma once

#include <string>

#include "plan/cluster_spec.h"
#include "plan/model_spec.h"
#include "plan/parallel_config.h"
#include "plan/training_settings.h"

namespace CLI {
class App;
}

namespace stepscope::cli {

struct CommonArgs {
  std::string model, gpu = "h100-sxm", profile, json_path;
  std::string dtype = "bf16", optimizer = "adamw", attention = "flash";
  int gpus = 0, global_batch = 0, activation_bits = 16;
};

// Prints "stepscope: error: MESSAGE" on stderr; returns exit code 2.
int plan_input_error(const std::string& message);

// --model (required), --gpu, --profile, --global-batch, --dtype, --optimizer,
// --attention, --activation-bits, --json.
void add_common(CLI::App* cmd, CommonArgs& a);

// One layout written out on the command line (pareto, recompute).
struct LayoutArgs {
  int tp = 1, pp = 1, dp = 1, cp = 1, vpp = 1;
  bool sequence_parallel = false, cpu_offload = false;
  std::string sharding = "ddp";
};

// --tp, --pp, --dp, --cp, --vpp, --sharding, --sequence-parallel, --cpu-offload.
void add_layout(CLI::App* cmd, LayoutArgs& a);

// The layout's parallel sizes, flags and sharding into `p`; an error message
// naming the option, or "".
std::string apply_layout(const LayoutArgs& a, plan::ParallelConfig& p);

// Model, settings and cluster (with `gpus` GPUs) from the common options; an
// error message naming the option, or "".
std::string resolve(const CommonArgs& a, int gpus, plan::ModelSpec& m, plan::TrainingSettings& t, plan::ClusterSpec& c);

}  // namespace stepscope::cli
