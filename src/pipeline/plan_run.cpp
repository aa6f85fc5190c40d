#include "pipeline/plan_run.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "plan/config_search.h"
#include "plan/fit_alternatives.h"
#include "model/plan_constraints.h"
#include "plan/search_evaluator.h"

namespace stepscope::pipeline {

using model::LayoutLimits;

PlannedLayout plan_layout(const PlanInputs& in) {
  PlannedLayout out;
  plan::PlanResult& r = out.result;
  auto refuse = [&out](PlanProblem p) {
    out.problem = std::move(p);
    return out;
  };
  if (in.model.empty())
    return refuse({"model", "required: a preset such as gpt3-175b or llama3-70b, or a model JSON file"});
  auto& p = r.parallel;
  LayoutInputs layout = in.layout;
  const bool fill_dp = in.dp_from_gpus;
  if (fill_dp) {
    // The other sizes are checked first (apply_layout with dp 1), then dp
    // takes the GPUs they leave.
    layout.dp = 1;
    if (PlanProblem e = apply_layout(layout, p); !e.ok()) return refuse(e);
    if (in.gpus > 0) {
      const int other = p.tp * p.pp * p.cp;  // ≤ 2^24 (checked)
      if (in.gpus % other != 0)
        return refuse({"gpus", fmt::format("{} GPUs do not divide into tp × pp × cp = {}; give dp", in.gpus, other)});
      layout.dp = in.gpus / other;
    }
  }
  if (PlanProblem e = apply_layout(layout, p); !e.ok()) return refuse(e);
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
  if (!model::parse_recompute(in.recompute, p.recompute))
    return refuse({"recompute", "expected none, selective, full or op"});
  if (in.recompute_layers < 0 || in.recompute_layers > model::ModelLimits::kLayers)
    return refuse({"recompute_layers", fmt::format("expected a whole number of layers from 0 to {}, got {}",
                                                   model::ModelLimits::kLayers, in.recompute_layers)});
  p.recompute_layers = in.recompute_layers;
  if (in.offload_layers < 0 || in.offload_layers > model::ModelLimits::kLayers)
    return refuse({"offload_layers", fmt::format("expected a whole number of layers from 0 to {}, got {}",
                                                 model::ModelLimits::kLayers, in.offload_layers)});
  p.offload_layers = in.offload_layers;
  const int gpus = in.gpus > 0 ? in.gpus : p.gpus();
  if (PlanProblem e = resolve_model_inputs(model, gpus, r.model, r.settings, r.cluster, &r.notes); !e.ok()) return refuse(e);
  r.settings.grad_fp32 = in.grad_fp32;
  r.settings.overlap_dp_comm = in.overlap_dp;
  if (auto problems = model::check_constraints(r.model, r.settings, r.cluster, p); !problems.empty()) {
    std::string joined;
    for (const auto& s : problems) joined += (joined.empty() ? "" : "; ") + s;
    return refuse({"", "invalid configuration: " + joined});
  }
  r.memory = model::estimate_memory(r.model, r.settings, r.cluster, p);
  r.step = model::estimate_step(r.model, r.settings, r.cluster, p);
  if (fill_dp && in.gpus > 0 && p.dp > 1)
    r.notes.push_back(fmt::format("dp {} fills the {} GPUs (tp × pp × cp = {}); give dp to set it", p.dp, in.gpus,
                                  p.tp * p.pp * p.cp));
  if (!r.memory.fits) r.alternatives = plan::fit_alternatives(r.model, r.settings, r.cluster, p);
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
  if (PlanProblem e = resolve_model_inputs(in, in.gpus, r.model, r.settings, r.cluster, &r.notes); !e.ok()) return refuse(e);
  if (std::string e = model::validate_model(r.model); !e.empty()) return refuse({"", e});
  if (r.settings.global_batch == 0) {
    // About 4M tokens a step, the batch Llama 2 and Llama 3 pretrained with
    // (Touvron et al. 2023, §2.2; Llama 3 paper §3.4.1), in whole sequences
    // and a multiple of the GPUs so that pure data parallelism divides it.
    const int64_t sequences = std::max<int64_t>(1, (kDefaultTokensPerStep + r.model.seq - 1) / r.model.seq);
    const int64_t rounded = (sequences + in.gpus - 1) / in.gpus * in.gpus;
    if (rounded > LayoutLimits::kGlobalBatch)
      return refuse({"global_batch", fmt::format("the default ({} sequences) is more than {}; give it", rounded,
                                                 LayoutLimits::kGlobalBatch)});
    r.settings.global_batch = static_cast<int>(rounded);
    r.notes.push_back(fmt::format("global batch {} ({:.1f}M tokens), the default of about 4M tokens per step",
                                  rounded, rounded * double(r.model.seq) / 1e6));
  }
  const plan::SearchSpace space = plan::search_space_for(r.model, r.settings, r.cluster);
  const auto t0 = std::chrono::steady_clock::now();
  r.search = plan::search_configs(space, plan::model_evaluator(r.model, r.settings, r.cluster), in.top);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& x : r.search.top) r.mfu.push_back(model::estimate_step(r.model, r.settings, r.cluster, x.config).mfu);
  return out;
}

}  // namespace stepscope::pipeline
