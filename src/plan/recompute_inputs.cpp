#include "plan/recompute_inputs.h"

#include <algorithm>

#include "model/memory_model.h"
#include "model/stage_layout.h"
#include "model/step_time_model.h"

namespace stepscope::plan {

// The specs and cost models of the model layer (src/model/).
using namespace model;

UniformRecomputeInputs uniform_recompute_inputs(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c,
                                                const ParallelConfig& p) {
  UniformRecomputeInputs in;
  const int pp = std::max(1, p.pp), vpp = std::max(1, p.vpp);
  const int micro_batches = std::max(1, t.global_batch / std::max(1, p.dp * p.micro_batch));
  std::array<double, 3> saved{};
  for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    ParallelConfig q = p;
    q.recompute = r;
    const auto i = static_cast<size_t>(r);
    saved[i] = layer_activation_bytes(m, t, q);
    in.costs.recompute_seconds[i] = estimate_layer(m, t, c, q).recompute * micro_batches;
  }
  constexpr size_t kNone = 0, kSel = 1, kFull = 2;
  UniformLayerCosts& k = in.costs;
  k.layers = static_cast<int>(stage_layout(m, t, c, p).first_stage_layers);  // the first stage's
  k.input_bytes = saved[kFull];  // full recomputation keeps the layer input only
  for (size_t i = 0; i < 3; ++i) k.kept_bytes[i] = std::max(0.0, saved[i] - saved[kFull]);
  // While one layer runs backward, what recomputation rebuilds of it is alive.
  k.work_bytes = {0, std::max(0.0, saved[kNone] - saved[kSel]), saved[kNone]};
  k.copies = (pp == 1 ? 1.0 : std::min(pp, micro_batches)) * (vpp > 1 ? 1 + (pp - 1.0) / (pp * vpp) : 1.0);

  ParallelConfig none = p;
  none.recompute = Recompute::kNone;
  // The first stage's memory, like the layer costs above (its activations are
  // the ones `copies` describes): what is not the layers' saved activations
  // (states, buffers, the embedding's dropout mask) is fixed; the rest of
  // the device is the budget, less the CUDA context and the share the
  // caching allocator reserves beyond what is allocated (memory_model.h).
  const MemoryEstimate first = estimate_stage_memory(m, t, c, none, 0);
  in.other_bytes = first.total - k.copies * k.layers * saved[kNone];
  in.budget_bytes =
      (first.capacity - first.context) / (1 + MemoryConstants::kAllocatorReserve) - in.other_bytes;
  return in;
}

}  // namespace stepscope::plan
