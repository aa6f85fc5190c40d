// `stepscope plan pareto`: the batch-size Pareto front of throughput against
// memory for one layout (batch_pareto.h);
// `stepscope plan sharding`: DDP or FSDP over a sweep of GPU counts or model
// sizes, with the crossover point and its reason (fsdp_advice.h).
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/output_file.h"
#include "cli/plan_cli_inputs.h"
#include "plan/batch_pareto.h"
#include "plan/fsdp_advice.h"
#include "model/memory_model.h"
#include "model/plan_constraints.h"
#include "plan/search_evaluator.h"
#include "model/step_time_model.h"

namespace stepscope::cli {

// The specs and cost models of the model layer (src/model/).
using namespace model;

namespace {

struct ParetoArgs : CommonArgs {
  LayoutArgs layout;
  std::string recompute = "none";
  std::vector<int> global_batches, micro_batches = {1, 2, 4, 8, 16};
};

struct ShardingArgs : CommonArgs {
  std::vector<int> gpu_counts;
  std::vector<int> micro_batches = {1, 2, 4, 8, 16};
};

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

int run_pareto(const ParetoArgs& a) {
  using namespace plan;
  report::AtomicOutput json_out;
  if (!open_output(a.json_path, json_out)) return 2;
  ParallelConfig p;
  if (auto e = pipeline::apply_layout(a.layout, p); !e.ok()) return plan_input_error(e);
  if (!parse_recompute(a.recompute, p.recompute)) return plan_input_error("--recompute: expected none, selective, full or op");
  for (int mb : a.micro_batches)
    if (mb < 1) return plan_input_error("--micro-batches: every entry must be at least 1");
  std::vector<int> batches = a.global_batches;
  if (batches.empty())  // dp x 1, 2, 4, ..., 256 sequences per replica
    for (int per_replica = 1; per_replica <= 256; per_replica *= 2) batches.push_back(p.dp * per_replica);
  for (int gb : batches)
    if (gb < 1) return plan_input_error("--global-batches: every entry must be at least 1");
  CommonArgs common = a;
  common.global_batch = batches.front();
  ModelSpec m;
  TrainingSettings t;
  ClusterSpec c;
  if (auto e = pipeline::resolve_model_inputs(common, p.gpus(), m, t, c); !e.ok()) return plan_input_error(e);
  if (std::string e = validate_model(m); !e.empty()) return plan_input_error(e);
  // The layout's own constraints (those that do not involve the batch) first:
  // a layout that cannot run at all is an input error, not an empty front.
  {
    TrainingSettings probe = t;
    ParallelConfig q = p;
    q.micro_batch = 1;
    // Divisible by dp, and pp micro-batches (what the interleaved schedule
    // needs); dp × pp ≤ tp × pp × dp × cp ≤ 2^24 (apply_layout).
    probe.global_batch = p.dp * std::max(p.pp, 1);
    if (auto problems = check_constraints(m, probe, c, q); !problems.empty()) {
      std::string joined;
      for (const auto& s : problems) joined += (joined.empty() ? "" : "; ") + s;
      return plan_input_error("invalid layout: " + joined);
    }
  }

  std::vector<BatchPoint> points;
  int evaluated = 0;
  for (int gb : batches) {
    for (int mb : a.micro_batches) {
      t.global_batch = gb;
      p.micro_batch = mb;
      if (!check_constraints(m, t, c, p).empty()) continue;  // e.g. gb not divisible by dp x mb
      ++evaluated;
      const MemoryEstimate mem = estimate_memory(m, t, c, p);
      if (!mem.fits) continue;
      const double step = estimate_step(m, t, c, p).total;
      points.push_back({gb, mb, double(gb) * m.seq / step, mem.total});
    }
  }
  const std::vector<size_t> front = pareto_front(points);

  std::string text = fmt::format("{} on {} x {} (tp {} pp {} dp {} cp {} vpp {}, {}, recompute {})\n", m.name, c.gpus,
                                 c.gpu.name, p.tp, p.pp, p.dp, p.cp, p.vpp, to_string(p.sharding), to_string(p.recompute));
  text += fmt::format("{} batch choices valid, {} fit memory, {} on the Pareto front\n", evaluated, points.size(),
                      front.size());
  nlohmann::json rows = nlohmann::json::array();
  if (front.empty()) {
    text += "no batch choice fits memory: a smaller micro-batch, recomputation or sharding may help\n";
  } else {
    text += fmt::format("\n{:>12} {:>11} {:>9} {:>8} {:>12}\n", "global batch", "micro-batch", "mem GB", "step s",
                        "tokens/s");
  }
  for (size_t i : front) {
    const BatchPoint& b = points[i];
    const double step = double(b.global_batch) * m.seq / b.tokens_per_second;
    text += fmt::format("{:>12} {:>11} {:>9.1f} {:>8.3f} {:>12.0f}\n", b.global_batch, b.micro_batch,
                        b.memory_bytes / 1e9, step, b.tokens_per_second);
    rows.push_back({{"global_batch", b.global_batch}, {"micro_batch", b.micro_batch},
                    {"memory_bytes", b.memory_bytes}, {"step_seconds", step},
                    {"tokens_per_second", b.tokens_per_second}});
  }
  if (!a.json_path.empty()) {
    nlohmann::json j = {{"model", m.name}, {"gpu", c.gpu.name}, {"gpus", c.gpus}, {"evaluated", evaluated},
                        {"fitting", points.size()}, {"front", rows}};
    if (json_out.ok() && !finish_output(json_out, j.dump(2) + "\n")) return 2;
  }
  if (a.json_path != "-" && !write_stdout(text)) return 2;
  return front.empty() ? 1 : 0;
}

nlohmann::json side_json(bool fits, const plan::RankedConfig& r) {
  if (!fits) return nullptr;
  return {{"micro_batch", r.config.micro_batch}, {"recompute", model::to_string(r.config.recompute)},
          {"memory_bytes", r.evaluation.memory_bytes}, {"step_seconds", r.evaluation.step_seconds},
          {"tokens_per_second", r.tokens_per_second}};
}

std::string side_text(bool fits, const plan::RankedConfig& r, bool sharded, int gpus) {
  // advise_fsdp does not try ZeRO-3 over one replica: it would be DDP.
  if (sharded && gpus < 2) return fmt::format("{:>34}", "n/a (one GPU)");
  if (!fits) return fmt::format("{:>34}", "does not fit");
  return fmt::format("{:>3} {:>10} {:>7.1f} {:>12.0f}", r.config.micro_batch, model::to_string(r.config.recompute),
                     r.evaluation.memory_bytes / 1e9, r.tokens_per_second);
}

int run_sharding(const ShardingArgs& a) {
  using namespace plan;
  report::AtomicOutput json_out;
  if (!open_output(a.json_path, json_out)) return 2;
  const std::vector<std::string> models = split_commas(a.model);
  if (models.empty()) return plan_input_error("--model: expected a preset, a file or a comma-separated list of them");
  if (a.gpu_counts.empty()) return plan_input_error("--gpus: expected a GPU count or a comma-separated list");
  if (a.global_batch == 0) return plan_input_error("--global-batch: required: sequences per step");
  if (models.size() > 1 && a.gpu_counts.size() > 1)
    return plan_input_error("--model/--gpus: sweep one of them (a list) and fix the other (one value)");
  for (int g : a.gpu_counts)
    if (g < 1) return plan_input_error("--gpus: every entry must be at least 1");
  const bool sweep_gpus = models.size() == 1;
  std::vector<FsdpScenario> scenarios;
  std::vector<std::string> names;
  std::vector<double> params;
  for (size_t i = 0; i < std::max(models.size(), a.gpu_counts.size()); ++i) {
    CommonArgs common = a;
    common.model = models[sweep_gpus ? 0 : i];
    const int gpus = a.gpu_counts[sweep_gpus ? i : 0];
    ModelSpec m;
    TrainingSettings t;
    ClusterSpec c;
    if (auto e = pipeline::resolve_model_inputs(common, gpus, m, t, c); !e.ok()) return plan_input_error(e);
    if (std::string e = validate_model(m); !e.empty()) return plan_input_error(e);
    if (t.global_batch % gpus != 0)
      return plan_input_error(fmt::format("--global-batch: {} is not divisible by {} GPUs (pure data parallelism)",
                                          t.global_batch, gpus));
    scenarios.push_back({sweep_gpus ? double(gpus) : double(m.total_params()), gpus, t.global_batch, m.seq,
                         model_evaluator(m, t, c)});
    names.push_back(m.name);
    params.push_back(double(m.total_params()));
  }
  FsdpOptions options;
  options.micro_batches = a.micro_batches;
  const FsdpAdvice advice = advise_fsdp(scenarios, options);

  std::string text = fmt::format("DDP or FSDP (ZeRO-3), pure data parallelism, global batch {}, sweep over {}\n\n",
                                 a.global_batch, sweep_gpus ? "GPU count" : "model size");
  text += fmt::format("{:>21} | {:^34} | {:^34} |\n", "", "DDP", "FSDP (ZeRO-3)");
  text += fmt::format("{:>14} {:>6} | {:>3} {:>10} {:>7} {:>12} | {:>3} {:>10} {:>7} {:>12} | {}\n", "model", "gpus",
                      "mb", "recompute", "mem GB", "tokens/s", "mb", "recompute", "mem GB", "tokens/s", "faster");
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < advice.rows.size(); ++i) {
    const FsdpRow& r = advice.rows[i];
    const bool fsdp_better = r.fsdp_fits && (!r.ddp_fits || r.fsdp.tokens_per_second > r.ddp.tokens_per_second);
    const char* faster = fsdp_better ? "FSDP" : (r.ddp_fits ? "DDP" : "neither fits");
    text += fmt::format("{:>14} {:>6} | {} | {} | {}\n", names[i], scenarios[i].gpus, side_text(r.ddp_fits, r.ddp, false, scenarios[i].gpus),
                        side_text(r.fsdp_fits, r.fsdp, true, scenarios[i].gpus), faster);
    rows.push_back({{"model", names[i]}, {"gpus", scenarios[i].gpus}, {"x", r.x}, {"ddp", side_json(r.ddp_fits, r.ddp)},
                    {"fsdp", side_json(r.fsdp_fits, r.fsdp)}, {"faster", faster}});
  }
  text += "\n" + advice.message + "\n";
  for (size_t i = 0; i < advice.rows.size() && advice.reason != CrossoverReason::kNone; ++i)
    if (advice.rows[i].x == advice.crossover_x) {
      text += fmt::format("crossover: {} ({:.2f} B parameters) on {} GPUs\n", names[i], params[i] / 1e9,
                          scenarios[i].gpus);
      break;
    }
  if (!a.json_path.empty()) {
    const char* reason = advice.reason == CrossoverReason::kNone           ? "none"
                         : advice.reason == CrossoverReason::kDdpDoesNotFit ? "memory"
                                                                            : "speed";
    nlohmann::json j = {{"sweep", sweep_gpus ? "gpus" : "parameters"},
                        {"global_batch", a.global_batch},
                        {"rows", rows},
                        {"reason", reason},
                        {"crossover_x", advice.reason == CrossoverReason::kNone ? nlohmann::json(nullptr)
                                                                                 : nlohmann::json(advice.crossover_x)},
                        {"fsdp_wins_after", advice.fsdp_wins_after},
                        {"message", advice.message}};
    if (json_out.ok() && !finish_output(json_out, j.dump(2) + "\n")) return 2;
  }
  if (a.json_path != "-" && !write_stdout(text)) return 2;
  return 0;
}

}  // namespace

void register_plan_advice(CLI::App* plan) {
  using model::LayoutLimits;
  auto pargs = std::make_shared<ParetoArgs>();
  auto* p = plan->add_subcommand("pareto", "batch-size Pareto front of throughput against memory for one layout");
  add_common(p, *pargs);
  add_layout(p, pargs->layout);
  p->add_option("--recompute", pargs->recompute, "none, selective, full or op");
  p->add_option("--global-batches", pargs->global_batches, "global batches to try (default dp x 1, 2, 4, ..., 256)")
      ->delimiter(',')
      ->check(whole_number(1, LayoutLimits::kGlobalBatch));
  p->add_option("--micro-batches", pargs->micro_batches, "micro-batches to try (default 1,2,4,8,16)")
      ->delimiter(',')
      ->check(whole_number(1, LayoutLimits::kSize));
  p->callback([pargs] { set_exit_code(run_pareto(*pargs)); });

  auto sargs = std::make_shared<ShardingArgs>();
  auto* s = plan->add_subcommand("sharding", "DDP or FSDP over a sweep of GPU counts or model sizes, with the crossover");
  add_common(s, *sargs);
  s->get_option("--model")->description("preset or file, or a comma-separated list of them (a model-size sweep)");
  s->add_option("--gpus", sargs->gpu_counts, "GPU count, or a comma-separated list (a GPU-count sweep)")
      ->delimiter(',')
      ->required()
      ->check(whole_number(1, LayoutLimits::kGpus));
  s->add_option("--micro-batches", sargs->micro_batches, "micro-batches to try (default 1,2,4,8,16)")
      ->delimiter(',')
      ->check(whole_number(1, LayoutLimits::kSize));
  s->callback([sargs] { set_exit_code(run_sharding(*sargs)); });
}

}  // namespace stepscope::cli
