// libFuzzer entry point for the planner's JSON inputs: the bytes go to the
// model reader and to the hardware-profile reader (`plan --model FILE`,
// `plan --profile FILE`). Either may refuse the input with an error; neither
// may crash, throw or hang. An accepted model, on a catalog GPU, and an
// accepted profile, under a preset model, go through the memory and
// step-time models, and every number they give must be finite: the readers'
// limits (docs/planner.md "Limits") exist so that no count overflows.
//
//   ./build-fuzz/fuzz/fuzz_plan_model -max_total_time=60 fuzz/corpus_fuzz_plan_model   (docs/fuzzing.md)
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "model/cluster_spec.h"
#include "model/hardware_profile_json.h"
#include "model/memory_model.h"
#include "model/model_spec.h"
#include "model/plan_constraints.h"
#include "model/step_time_model.h"

namespace {

using namespace stepscope::model;

void require_finite(double v) {
  if (!std::isfinite(v) || v < 0) std::abort();
}

// Memory and step time of `m` on `c` under a layout the constraints accept.
void estimate(const ModelSpec& m, const ClusterSpec& base, int tp) {
  TrainingSettings t;
  t.global_batch = 8;
  ParallelConfig p;
  p.tp = tp;
  p.dp = 1;
  p.micro_batch = 2;
  p.recompute = Recompute::kSelective;
  ClusterSpec c = base;
  c.gpus = p.gpus();
  if (!check_constraints(m, t, c, p).empty()) return;
  const MemoryEstimate mem = estimate_memory(m, t, c, p);
  for (double v : {mem.params_per_gpu, mem.weights, mem.gradients, mem.optimizer, mem.activations, mem.temporary,
                   mem.total})
    require_finite(v);
  const StepEstimate s = estimate_step(m, t, c, p);
  for (double v : {s.layer_flops_fwd, s.model_flops, s.hardware_flops, s.compute_fwd, s.compute_bwd, s.attention,
                   s.recompute, s.tp_comm, s.pp_p2p, s.embedding_and_loss, s.bubble, s.dp_comm_total, s.optimizer,
                   s.total, s.model_tflops_per_gpu, s.mfu})
    require_finite(v);
  if (!(s.total > 0)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string error;
  if (auto m = model_from_json_text(text, "fuzz.json", error)) {
    if (!validate_model(*m).empty() || m->total_params() <= 0) std::abort();
    const ClusterSpec h100{*find_gpu("h100-sxm"), 1, {}};
    estimate(*m, h100, 1);
    if (m->heads % 2 == 0 && m->kv_heads % 2 == 0 && m->ffn_hidden % 2 == 0) estimate(*m, h100, 2);
  } else if (error.empty() || error.find('\n') != std::string::npos) {
    std::abort();  // a refusal is one line
  }
  error.clear();
  if (auto c = hardware_profile_from_json_text(text, "fuzz.json", error)) {
    for (double v : {c->gpu.hbm_achievable_Bps(), c->gpu.nvlink_achievable_Bps(), c->gpu.network_achievable_Bps()})
      if (!std::isfinite(v) || !(v > 0)) std::abort();
    if (c->gpu.gpus_per_node < 1) std::abort();
    estimate(*find_model_preset("gpt3-125m"), *c, 1);
    estimate(*find_model_preset("llama3-8b"), *c, 2);
  } else if (error.empty() || error.find('\n') != std::string::npos) {
    std::abort();
  }
  return 0;
}
