// Options shared by the `plan` subcommands that build a model, training
// settings and a cluster from the command line (search, recompute, pareto,
// sharding), and their one-line error convention (exit 2). The inputs are
// resolved by the library (pipeline/plan_inputs.h); this file only binds them
// to flags.
#pragma once

#include <string>

#include "pipeline/plan_inputs.h"

namespace CLI {
class App;
}

namespace stepscope::cli {

struct CommonArgs : pipeline::ModelInputs {
  std::string json_path;
  int gpus = 0;
};

// The --gpu help: the planner's catalog names.
std::string gpu_option_help();

// Prints "stepscope: error: MESSAGE" on stderr; returns exit code 2.
int plan_input_error(const std::string& message);
// The same for a refused input ("--option: message").
int plan_input_error(const pipeline::PlanProblem& problem);

// The training settings every plan question takes: --dtype, --optimizer,
// --attention, --stack, --compile, --fp8-all-gather, --tp-overlap,
// --optimizer-impl, --fp8-impl, --moe-capacity-factor, --moe-pad-to-capacity,
// --fsdp-flat-params, --cuda-graphs, --activation-bits.
void add_settings(CLI::App* cmd, pipeline::ModelInputs& a);

// --model (required), --gpu, --profile, --global-batch, --seq, the settings, --json.
void add_common(CLI::App* cmd, CommonArgs& a);

// One layout written out on the command line (pareto, recompute).
using LayoutArgs = pipeline::LayoutInputs;

// --tp, --pp, --dp, --cp, --vpp, --sharding, --sequence-parallel, --cpu-offload.
void add_layout(CLI::App* cmd, LayoutArgs& a);

}  // namespace stepscope::cli
