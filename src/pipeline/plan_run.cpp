#include "pipeline/plan_run.h"

#include <fmt/core.h>

#include <chrono>
#include <cstdint>

#include "plan/config_search.h"
#include "plan/plan_constraints.h"
#include "plan/search_evaluator.h"

namespace stepscope::pipeline {

using plan::LayoutLimits;

PlannedLayout plan_layout(const PlanInputs& in) {
  PlannedLayout out;
  plan::PlanResult& r = out.result;
  auto refuse = [&out](PlanProblem p) {
    out.problem = std::move(p);
    return out;
  };
  if (in.model.empty()) return refuse({"model", "required: a preset such as gpt3-175b or llama3-70b, or a model JSON file"});
  auto& p = r.parallel;
  if (PlanProblem e = apply_layout(in.layout, p); !e.ok()) return refuse(e);
  if (in.micro_batch < 1 || in.micro_batch > LayoutLimits::kSize)
    return refuse({"micro_batch", fmt::format("expected a whole number from 1 to {}, got {}", LayoutLimits::kSize,
                                              in.micro_batch)});
  p.micro_batch = in.micro_batch;
  if (in.gpus < 0 || in.gpus > LayoutLimits::kGpus)
    return refuse({"gpus", fmt::format("expected a whole number from 1 to {}, got {}", LayoutLimits::kGpus, in.gpus)});
  ModelInputs model = in;
  if (model.global_batch == 0) {
    // dp and micro-batch are each at most 2^20: their product may pass int.
    const int64_t per_step = int64_t{p.dp} * p.micro_batch;
    if (per_step > LayoutLimits::kGlobalBatch)
      return refuse({"global_batch", fmt::format("dp × micro-batch = {} is more than {}; give it explicitly", per_step,
                                                 LayoutLimits::kGlobalBatch)});
    model.global_batch = static_cast<int>(per_step);
  }
  if (!plan::parse_recompute(in.recompute, p.recompute)) return refuse({"recompute", "expected none, selective or full"});
  const int gpus = in.gpus > 0 ? in.gpus : p.gpus();
  if (PlanProblem e = resolve_model_inputs(model, gpus, r.model, r.settings, r.cluster); !e.ok()) return refuse(e);
  r.settings.grad_fp32 = in.grad_fp32;
  r.settings.overlap_dp_comm = in.overlap_dp;
  if (auto problems = plan::check_constraints(r.model, r.settings, r.cluster, p); !problems.empty()) {
    std::string joined;
    for (const auto& s : problems) joined += (joined.empty() ? "" : "; ") + s;
    return refuse({"", "invalid configuration: " + joined});
  }
  r.memory = plan::estimate_memory(r.model, r.settings, r.cluster, p);
  r.step = plan::estimate_step(r.model, r.settings, r.cluster, p);
  return out;
}

SearchedLayouts search_layouts(const SearchInputs& in) {
  SearchedLayouts out;
  auto refuse = [&out](PlanProblem p) {
    out.problem = std::move(p);
    return out;
  };
  if (in.gpus < 1 || in.gpus > LayoutLimits::kGpus)
    return refuse({"gpus", fmt::format("expected a whole number from 1 to {}, got {}", LayoutLimits::kGpus, in.gpus)});
  if (in.top < 1 || in.top > kMaxSearchTop)
    return refuse({"top", fmt::format("expected a whole number from 1 to {}, got {}", kMaxSearchTop, in.top)});
  plan::LayoutSearchResult& r = out.result;
  if (in.global_batch == 0) return refuse({"global_batch", "required: sequences per step"});
  if (PlanProblem e = resolve_model_inputs(in, in.gpus, r.model, r.settings, r.cluster); !e.ok()) return refuse(e);
  if (std::string e = plan::validate_model(r.model); !e.empty()) return refuse({"", e});
  const plan::SearchSpace space = plan::search_space_for(r.model, r.settings, r.cluster);
  const auto t0 = std::chrono::steady_clock::now();
  r.search = plan::search_configs(space, plan::model_evaluator(r.model, r.settings, r.cluster), in.top);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& x : r.search.top) r.mfu.push_back(plan::estimate_step(r.model, r.settings, r.cluster, x.config).mfu);
  return out;
}

}  // namespace stepscope::pipeline
