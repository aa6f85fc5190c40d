// DDP or FSDP (ZeRO-3)? Over a sweep of scenarios (growing model sizes or GPU
// counts, each with its own evaluator), compare the best pure data-parallel
// layout of each kind and name the first scenario where FSDP wins, and why:
// DDP no longer fits (memory), or FSDP is faster while both fit (FSDP's
// freed memory buys a larger micro-batch or no recomputation, outweighing
// its extra weight all-gathers: 1.5x DDP's gradient traffic, Rajbhandari et
// al. 2020, ZeRO section 7).
#pragma once

#include <string>
#include <vector>

#include "plan/config_search.h"

namespace stepscope::plan {

using model::Recompute;

struct FsdpScenario {
  double x = 0;            // the swept quantity (parameters, GPUs, ...), increasing
  int gpus = 1;            // data-parallel size (tp = pp = cp = 1)
  int global_batch = 1;    // sequences per step
  int sequence_length = 1;
  Evaluator evaluate;
};

struct FsdpOptions {
  std::vector<int> micro_batches = {1, 2, 4, 8, 16};
  std::vector<Recompute> recomputes = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
};

struct FsdpRow {
  double x = 0;
  bool ddp_fits = false, fsdp_fits = false;
  RankedConfig ddp, fsdp;  // best fitting layout of each kind (when it fits)
};

enum class CrossoverReason { kNone, kDdpDoesNotFit, kFsdpFaster };

struct FsdpAdvice {
  std::vector<FsdpRow> rows;
  CrossoverReason reason = CrossoverReason::kNone;  // kNone: DDP wins (or ties) everywhere
  double crossover_x = 0;  // the first scenario's x where FSDP wins
  bool fsdp_wins_after = true;  // FSDP also wins at every later scenario
  std::string message;     // one line for the report
};

FsdpAdvice advise_fsdp(const std::vector<FsdpScenario>& scenarios, const FsdpOptions& options = {});

}  // namespace stepscope::plan
