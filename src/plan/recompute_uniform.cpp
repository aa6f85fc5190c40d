#include "plan/recompute_uniform.h"

#include <algorithm>
#include <tuple>

namespace stepscope::plan {

double uniform_memory_bytes(const UniformLayerCosts& c, const std::array<int, 3>& count) {
  double kept = c.layers * c.input_bytes;
  double work = 0;
  for (int p = 0; p < 3; ++p) {
    kept += count[p] * c.kept_bytes[p];
    if (count[p] > 0) work = std::max(work, c.work_bytes[p]);
  }
  return c.copies * kept + work;
}

double uniform_recompute_seconds(const UniformLayerCosts& c, const std::array<int, 3>& count) {
  double t = 0;
  for (int p = 0; p < 3; ++p) t += count[p] * c.recompute_seconds[p];
  return t;
}

UniformRecomputePlan plan_uniform_recompute(const UniformLayerCosts& costs, double budget_bytes) {
  constexpr int kNone = 0, kSel = 1;
  UniformRecomputePlan best;
  const int L = std::max(costs.layers, 0);
  // Key compared lexicographically: time, memory, then prefer fewer
  // recomputed layers (more kNone, then more kSelective).
  auto key = [](const UniformRecomputePlan& p) {
    return std::make_tuple(p.recompute_seconds, p.memory_bytes, -p.count[kNone], -p.count[kSel]);
  };
  for (int full = 0; full <= L; ++full) {
    for (int sel = 0; sel + full <= L; ++sel) {
      UniformRecomputePlan cand;
      cand.count = {L - sel - full, sel, full};
      cand.memory_bytes = uniform_memory_bytes(costs, cand.count);
      if (cand.memory_bytes > budget_bytes) continue;
      cand.recompute_seconds = uniform_recompute_seconds(costs, cand.count);
      cand.feasible = true;
      if (!best.feasible || key(cand) < key(best)) best = cand;
    }
  }
  if (!best.feasible) {
    best.count = {0, 0, L};
    best.memory_bytes = uniform_memory_bytes(costs, best.count);
    best.recompute_seconds = uniform_recompute_seconds(costs, best.count);
  }
  return best;
}

}  // namespace stepscope::plan
