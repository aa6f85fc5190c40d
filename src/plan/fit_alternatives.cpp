#include "plan/fit_alternatives.h"

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "plan/config_search.h"
#include "model/memory_model.h"
#include "model/plan_constraints.h"
#include "plan/search_evaluator.h"
#include "model/step_time_model.h"

namespace stepscope::plan {

// The specs and cost models of the model layer (src/model/).
using namespace model;
namespace {

// How much optimizer state a sharding takes off each GPU, as an order.
int strength(Sharding s) {
  switch (s) {
    case Sharding::kDdp:
      return 0;
    case Sharding::kZero1:
      return 1;
    case Sharding::kZero2:
      return 2;
    case Sharding::kFsdpHybrid:
      return 3;
    case Sharding::kZero3:
      return 4;
  }
  return 0;
}

// The alternative predicted, when it is a layout the planner and the search
// both accept and it fits.
std::optional<FitAlternative> try_layout(const ModelSpec& m, const TrainingSettings& t, ClusterSpec c,
                                         const ParallelConfig& p, std::string change) {
  if (p.gpus() > LayoutLimits::kGpus) return std::nullopt;
  c.gpus = p.gpus();
  if (!check_constraints(m, t, c, p).empty()) return std::nullopt;
  // The search's rules too: tp inside a node, sharding that the frameworks
  // combine with pipelining, offload only with a ZeRO stage.
  if (invalid_reason(search_space_for(m, t, c), p) != nullptr) return std::nullopt;
  const MemoryEstimate mem = estimate_memory(m, t, c, p);
  if (!mem.fits) return std::nullopt;
  return FitAlternative{std::move(change), p, c.gpus, mem.total, estimate_step(m, t, c, p).total};
}

std::string gpus_suffix(const ParallelConfig& p) { return fmt::format(" ({} GPUs)", p.gpus()); }

}  // namespace

std::vector<FitAlternative> fit_alternatives(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c,
                                             const ParallelConfig& p, size_t limit) {
  std::vector<FitAlternative> out;
  using Tries = std::vector<std::pair<ParallelConfig, std::string>>;
  // Of one kind of change, tried least first: the first that fits.
  auto keep_first = [&](const Tries& tries) {
    for (const auto& [layout, change] : tries)
      if (auto a = try_layout(m, t, c, layout, change)) {
        out.push_back(std::move(*a));
        return;
      }
  };
  auto with = [&p](auto&& change) {
    ParallelConfig q = p;
    change(q);
    return q;
  };

  Tries smaller_micro_batch, more_recompute, stronger_sharding, resplit_tp, resplit_pp, more_tp, more_pp;
  for (int mb = p.micro_batch / 2; mb >= 1; mb /= 2)
    smaller_micro_batch.push_back(
        {with([mb](ParallelConfig& q) { q.micro_batch = mb; }), fmt::format("micro-batch {}", mb)});
  for (Recompute r : {Recompute::kSelective, Recompute::kFull})
    if (r > p.recompute)
      more_recompute.push_back(
          {with([r](ParallelConfig& q) { q.recompute = r; }), fmt::format("recompute {}", to_string(r))});
  for (Sharding s : {Sharding::kZero1, Sharding::kZero2, Sharding::kZero3})
    if (strength(s) > strength(p.sharding))
      stronger_sharding.push_back(
          {with([s](ParallelConfig& q) { q.sharding = s; }), fmt::format("sharding {}", to_string(s))});
  for (int f : {2, 4, 8}) {
    // The same GPUs split otherwise: replicas traded for a wider
    // tensor-parallel group or more pipeline stages (ZeRO-2/3 do not
    // combine with pipelining: ZeRO-1 there).
    if (p.dp % f == 0) {
      const ParallelConfig wide = with([&](ParallelConfig& q) { q.tp *= f, q.dp /= f; });
      resplit_tp.push_back({wide, fmt::format("tp {}, dp {}", wide.tp, wide.dp)});
      const ParallelConfig deep = with([&](ParallelConfig& q) {
        q.pp *= f, q.dp /= f;
        if (strength(q.sharding) > strength(Sharding::kZero1)) q.sharding = Sharding::kZero1;
      });
      resplit_pp.push_back({deep, fmt::format("pp {}, dp {}", deep.pp, deep.dp)});
    }
    // More GPUs.
    const ParallelConfig wide = with([f](ParallelConfig& q) { q.tp *= f; });
    more_tp.push_back({wide, fmt::format("tp {}", wide.tp) + gpus_suffix(wide)});
    const ParallelConfig deep = with([f](ParallelConfig& q) { q.pp *= f; });
    more_pp.push_back({deep, fmt::format("pp {}", deep.pp) + gpus_suffix(deep)});
  }
  for (const Tries* kind : {&smaller_micro_batch, &more_recompute, &stronger_sharding, &resplit_tp, &resplit_pp,
                            &more_tp, &more_pp})
    keep_first(*kind);

  if (out.empty()) {
    // No single change is enough: the strongest settings together, alone
    // and with each increase of GPUs.
    ParallelConfig strong = p;
    strong.micro_batch = 1;
    strong.recompute = Recompute::kFull;
    std::string what = "micro-batch 1, recompute full";
    if (p.dp > 1 && strength(p.sharding) < strength(Sharding::kZero3)) {
      strong.sharding = p.pp > 1 ? Sharding::kZero1 : Sharding::kZero3;
      what += fmt::format(", sharding {}", to_string(strong.sharding));
    }
    keep_first({{strong, what}});
    for (int f : {2, 4, 8}) {
      ParallelConfig q = strong;
      q.tp = p.tp * f;
      ParallelConfig r = strong;
      r.pp = p.pp * f;
      if (r.pp > 1 && strength(r.sharding) > strength(Sharding::kZero1)) r.sharding = Sharding::kZero1;
      keep_first({{q, what + fmt::format(", tp {}", q.tp) + gpus_suffix(q)}});
      keep_first({{r, what + fmt::format(", pp {}", r.pp) + gpus_suffix(r)}});
      if (!out.empty()) break;
    }
  }
  // On the same GPUs first, then on more; fastest first within each.
  const int gpus = p.gpus();
  std::stable_sort(out.begin(), out.end(), [gpus](const FitAlternative& a, const FitAlternative& b) {
    return std::pair(a.gpus != gpus, a.step_seconds) < std::pair(b.gpus != gpus, b.step_seconds);
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

}  // namespace stepscope::plan
