// Savings by replay (docs/whatif.md, "Savings"): a finding's saving is the
// mean step of the run without the profiler minus the mean step of the same
// replay with the finding's remedy applied, on the rank where it is largest.
// It replaces the detector's bound as the estimated saving (the bound is kept
// beside it as a cross-check). A finding without a remedy model, or on ranks
// whose replay is not faithful, keeps the bound as its saving.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/gpu_timeline.h"
#include "diagnose/finding.h"
#include "whatif/profiler_cost.h"
#include "whatif/rank_replay.h"
#include "whatif/step_graph.h"

namespace stepscope::diagnose {

struct RankReplayInputs {
  int64_t rank = 0;
  const whatif::StepGraph* graph = nullptr;
  const analysis::GpuTimeline* timeline = nullptr;
  const whatif::UnprofiledBaseline* baseline = nullptr;
  bool faithful = false;  // replayed within whatif::kFidelityLimitPct, with step windows
};

// A rank's remedies (those of `remedies` on r.rank) replayed on that rank:
// the unprofiled mean step minus the remedied one; rank -1 where the rank's
// replay is not faithful or there is nothing to apply.
Finding::ReplayPick replay_pick(const RankReplayInputs& r, const std::vector<RankRemedy>& remedies);

// Keeps each time-saving finding's bound and, where a remedy model and a
// faithful replay exist, makes the replay saving its estimated saving: the
// finding's replay_pick where the ranks were replayed as they were read,
// else its remedies replayed on `ranks`.
void apply_replay_savings(std::vector<Finding>& findings, const std::vector<RankReplayInputs>& ranks);

// Per rank (ranks' order): all the given findings' remedies applied together,
// the unprofiled step minus the remedied step, ns; -1 where not replayed.
std::vector<int64_t> combined_savings(const std::vector<Finding>& findings, const std::vector<RankReplayInputs>& ranks);
std::vector<int64_t> combined_savings(const std::vector<const Finding*>& findings,
                                      const std::vector<RankReplayInputs>& ranks);

}  // namespace stepscope::diagnose
