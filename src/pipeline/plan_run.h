// The planner's questions as one call each, shared by `stepscope plan`,
// `stepscope plan search` and Python's stepscope.plan / plan_search: inputs
// as given (plan_inputs.h) in, the prediction or the one problem out. Front
// ends parse their arguments and render; the checks and defaults live here.
#pragma once

#include <cstdint>

#include "pipeline/plan_inputs.h"
#include "plan/plan_result.h"

namespace stepscope::pipeline {

// `stepscope plan`: one layout's memory per GPU and step time.
struct PlanInputs : ModelInputs {
  LayoutInputs layout;
  // dp not given: it fills the GPUs, gpus / (tp × pp × cp) (1 without gpus),
  // and layout.dp is not read.
  bool dp_from_gpus = false;
  int gpus = 0;         // GPUs of the job; 0 = tp × pp × dp × cp
  int micro_batch = 1;  // sequences per micro-batch
  std::string recompute = "none";
  int recompute_layers = 0;  // layers per stage under `recompute`; 0 = all
  int offload_layers = 0;    // layers per stage whose activations wait in host memory
  bool grad_fp32 = false;   // accumulate and reduce gradients in fp32
  bool overlap_dp = true;   // data-parallel communication overlapped with backward
};
// global_batch 0 = dp × micro-batch.

struct PlannedLayout {
  PlanProblem problem;  // ok() unless an input was refused
  plan::PlanResult result;
};

PlannedLayout plan_layout(const PlanInputs& in);

// `stepscope plan search`: the fastest layouts of `gpus` GPUs that fit memory.
inline constexpr int kMaxSearchTop = 100000;
struct SearchInputs : ModelInputs {
  int gpus = 0;   // required
  int top = 10;   // layouts kept
};
// global_batch 0 = about 4M tokens per step (kDefaultTokensPerStep), in
// whole sequences, rounded up to a multiple of the GPU count.
inline constexpr int64_t kDefaultTokensPerStep = int64_t{1} << 22;

struct SearchedLayouts {
  PlanProblem problem;
  plan::LayoutSearchResult result;
};

SearchedLayouts search_layouts(const SearchInputs& in);

}  // namespace stepscope::pipeline
