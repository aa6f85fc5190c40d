#include "plan/fsdp_advice.h"

#include <fmt/core.h>

namespace stepscope::plan {

using model::ParallelConfig;
using model::Recompute;
using model::Sharding;

namespace {

// The fastest fitting pure data-parallel layout with this sharding; false if none fits.
bool best_layout(const FsdpScenario& s, Sharding sharding, const FsdpOptions& o, RankedConfig& out) {
  bool found = false;
  ParallelConfig c;
  c.dp = s.gpus;
  c.sharding = sharding;
  for (int mb : o.micro_batches) {
    if (mb < 1 || s.global_batch % (s.gpus * mb) != 0) continue;
    c.micro_batch = mb;
    for (Recompute r : o.recomputes) {
      c.recompute = r;
      const Evaluation e = s.evaluate(c);
      if (!e.fits || !(e.step_seconds > 0)) continue;
      const double tps = double(s.global_batch) * s.sequence_length / e.step_seconds;
      if (!found || tps > out.tokens_per_second ||
          (tps == out.tokens_per_second && e.memory_bytes < out.evaluation.memory_bytes)) {
        out = {c, e, tps};
        found = true;
      }
    }
  }
  return found;
}

bool fsdp_wins(const FsdpRow& r) {
  return r.fsdp_fits && (!r.ddp_fits || r.fsdp.tokens_per_second > r.ddp.tokens_per_second);
}

}  // namespace

FsdpAdvice advise_fsdp(const std::vector<FsdpScenario>& scenarios, const FsdpOptions& options) {
  FsdpAdvice advice;
  for (const FsdpScenario& s : scenarios) {
    FsdpRow row;
    row.x = s.x;
    row.ddp_fits = best_layout(s, Sharding::kDdp, options, row.ddp);
    // ZeRO-3 over one data-parallel replica is DDP: FSDP needs dp > 1.
    row.fsdp_fits = s.gpus > 1 && best_layout(s, Sharding::kZero3, options, row.fsdp);
    advice.rows.push_back(row);
  }
  for (size_t i = 0; i < advice.rows.size(); ++i) {
    const FsdpRow& r = advice.rows[i];
    if (!fsdp_wins(r)) continue;
    advice.crossover_x = r.x;
    advice.reason = r.ddp_fits ? CrossoverReason::kFsdpFaster : CrossoverReason::kDdpDoesNotFit;
    for (size_t j = i + 1; j < advice.rows.size(); ++j) advice.fsdp_wins_after &= fsdp_wins(advice.rows[j]);
    break;
  }
  switch (advice.reason) {
    case CrossoverReason::kNone:
      advice.message = "DDP is at least as fast as FSDP at every point of the sweep";
      break;
    case CrossoverReason::kDdpDoesNotFit:
      advice.message = fmt::format("FSDP from {:g}: DDP's replicated weights, gradients and optimizer states no longer fit (memory)",
                                   advice.crossover_x);
      break;
    case CrossoverReason::kFsdpFaster:
      advice.message = fmt::format("FSDP from {:g}: both fit, and FSDP's freed memory outweighs its extra all-gathers (speed)",
                                   advice.crossover_x);
      break;
  }
  if (advice.reason != CrossoverReason::kNone && !advice.fsdp_wins_after)
    advice.message += "; DDP wins again at some later points";
  return advice;
}

}  // namespace stepscope::plan
