// `stepscope plan search`: the fastest layouts for a GPU count that fit memory;
// `stepscope plan recompute`: how many layers of a layout to recompute, and how.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <memory>

#include "cli/output_file.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/plan_cli_inputs.h"
#include "pipeline/plan_run.h"
#include "model/cluster_spec.h"
#include "report/plan_report.h"
#include "model/model_spec.h"
#include "model/plan_constraints.h"
#include "plan/recompute_inputs.h"
#include "model/step_time_model.h"
#include "model/training_settings.h"

namespace stepscope::cli {

// The specs and cost models of the model layer (src/model/).
using namespace model;

namespace {

struct SearchArgs : CommonArgs {
  int top = 10;
};

struct RecomputeArgs : CommonArgs {
  LayoutArgs layout;
  int micro_batch = 1;
  double budget_gb = 0;
};

int fail(const std::string& message) { return plan_input_error(message); }

int run_search(const SearchArgs& a) {
  report::AtomicOutput json_out;
  if (!open_output(a.json_path, json_out)) return 2;
  pipeline::SearchInputs in;
  static_cast<pipeline::ModelInputs&>(in) = a;
  in.gpus = a.gpus;
  in.top = a.top;
  const pipeline::SearchedLayouts searched = pipeline::search_layouts(in);
  if (!searched.problem.ok()) return fail(pipeline::plan_problem_line(searched.problem));
  if (json_out.ok() && !finish_output(json_out, report::search_json(searched.result))) return 2;
  if (a.json_path != "-" && !write_stdout(report::search_text(searched.result))) return 2;
  return 0;
}

int run_recompute(const RecomputeArgs& a) {
  using namespace plan;
  report::AtomicOutput json_out;
  if (!open_output(a.json_path, json_out)) return 2;
  ParallelConfig p;
  if (auto e = pipeline::apply_layout(a.layout, p); !e.ok()) return plan_input_error(e);
  p.micro_batch = a.micro_batch;
  if (p.micro_batch < 1) return fail("--micro-batch: must be at least 1");
  ModelSpec m;
  TrainingSettings t;
  ClusterSpec c;
  CommonArgs common = a;
  if (common.global_batch == 0) {
    // dp and micro-batch are each at most 2^20: their product may pass int.
    const int64_t per_step = int64_t{p.dp} * p.micro_batch;
    if (per_step > LayoutLimits::kGlobalBatch)
      return fail(fmt::format("--global-batch: dp × micro-batch = {} is more than {}; give it explicitly", per_step,
                              LayoutLimits::kGlobalBatch));
    common.global_batch = static_cast<int>(per_step);
  }
  if (auto e = pipeline::resolve_model_inputs(common, p.gpus(), m, t, c); !e.ok()) return plan_input_error(e);
  if (std::string e = validate_model(m); !e.empty()) return fail(e);
  if (m.layers % p.pp != 0) return fail("--pp: must divide the model's layers");
  if (t.global_batch % (p.dp * p.micro_batch) != 0) return fail("--global-batch: must be divisible by dp × micro-batch");
  const UniformRecomputeInputs in = uniform_recompute_inputs(m, t, c, p);
  const double budget = a.budget_gb > 0 ? a.budget_gb * 1e9 : in.budget_bytes;
  const UniformRecomputePlan r = plan_uniform_recompute(in.costs, budget);
  std::string text = fmt::format("{} layers on the first stage, {:.2f} GB for activations ({:.2f} GB of states and buffers)\n",
                                 in.costs.layers, budget / 1e9, in.other_bytes / 1e9);
  if (!r.feasible)
    text += fmt::format("does not fit: even full recomputation of every layer needs {:.2f} GB\n", r.memory_bytes / 1e9);
  else
    text += fmt::format("none {} · selective {} · full {} layers: {:.2f} GB of activations, {:.3f} s of recomputation per step\n",
                        r.count[0], r.count[1], r.count[2], r.memory_bytes / 1e9, r.recompute_seconds);
  if (!a.json_path.empty()) {
    nlohmann::json j = {{"layers", in.costs.layers}, {"budget_bytes", budget}, {"other_bytes", in.other_bytes},
                        {"feasible", r.feasible}, {"none", r.count[0]}, {"selective", r.count[1]},
                        {"full", r.count[2]}, {"activation_bytes", r.memory_bytes},
                        {"recompute_seconds", r.recompute_seconds}};
    if (json_out.ok() && !finish_output(json_out, j.dump(2) + "\n")) return 2;
  }
  if (a.json_path != "-" && !write_stdout(text)) return 2;
  return r.feasible ? 0 : 1;
}

}  // namespace

void register_plan_search(CLI::App* plan) {
  using model::LayoutLimits;
  auto sargs = std::make_shared<SearchArgs>();
  auto* s = plan->add_subcommand("search", "the fastest layouts for a GPU count that fit memory");
  add_common(s, *sargs);
  s->add_option("--gpus", sargs->gpus, "GPUs of the job")->required()->check(whole_number(1, LayoutLimits::kGpus));
  s->get_option("--global-batch")
      ->description("sequences per step (default: about 4M tokens, a multiple of --gpus; printed)");
  s->add_option("--top", sargs->top, "how many layouts to list (default 10)")->check(whole_number(1, pipeline::kMaxSearchTop));
  s->callback([sargs] { set_exit_code(run_search(*sargs)); });

  auto rargs = std::make_shared<RecomputeArgs>();
  auto* r = plan->add_subcommand("recompute", "per-layer recomputation (none/selective/full) that fits a layout's memory");
  add_common(r, *rargs);
  add_layout(r, rargs->layout);
  r->add_option("--micro-batch", rargs->micro_batch, "sequences per micro-batch")
      ->check(whole_number(1, LayoutLimits::kSize));
  r->add_option("--budget-gb", rargs->budget_gb, "memory for activations, GB (default: what the layout leaves)")
      ->check(number_above(0, 1e6));
  r->callback([rargs] { set_exit_code(run_recompute(*rargs)); });
}

}  // namespace stepscope::cli
