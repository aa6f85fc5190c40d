#include "diagnose/replay_savings.h"

#include <algorithm>

#include "whatif/remedy.h"

namespace stepscope::diagnose {

namespace {

const RankReplayInputs* find_rank(const std::vector<RankReplayInputs>& ranks, int64_t rank) {
  for (const RankReplayInputs& r : ranks)
    if (r.rank == rank) return &r;
  return nullptr;
}

// The unprofiled mean step minus the mean step with the remedy, ns (>= 0 by
// the replay's monotonicity up to rounding; clamped).
int64_t replay_saving_ns(const RankReplayInputs& r, const whatif::Remedy& remedy) {
  const whatif::ReplayInput in = whatif::apply_remedy(*r.graph, *r.timeline, remedy, r.baseline->input);
  const int64_t after = whatif::mean_step_ns(*r.graph, in);
  return std::max<int64_t>(0, r.baseline->unprofiled_step_ns - after);
}

}  // namespace

Finding::ReplayPick replay_pick(const RankReplayInputs& r, const std::vector<RankRemedy>& remedies) {
  Finding::ReplayPick pick;
  if (!r.faithful || r.baseline->unprofiled_step_ns <= 0) return pick;
  for (const RankRemedy& rr : remedies) {
    if (rr.rank != r.rank || rr.remedy.empty()) continue;
    const int64_t s = replay_saving_ns(r, rr.remedy);
    if (pick.rank < 0 || s > pick.saving_ns) pick = {rr.rank, s, r.baseline->unprofiled_step_ns};
  }
  return pick;
}

void apply_replay_savings(std::vector<Finding>& findings, const std::vector<RankReplayInputs>& ranks) {
  for (Finding& f : findings) {
    if (!f.saves_time) continue;
    f.bound_saving_us = f.estimated_saving_us;
    f.bound_saving_pct = f.estimated_saving_pct;
    f.bound_rank = f.saving_rank;
    int64_t best = -1, best_rank = -1, best_step = 0;
    if (f.replay_pick.rank >= 0) {
      best = f.replay_pick.saving_ns, best_rank = f.replay_pick.rank, best_step = f.replay_pick.step_ns;
    } else {
      for (const RankRemedy& rr : f.remedies) {
        const RankReplayInputs* r = find_rank(ranks, rr.rank);
        if (r == nullptr || !r->faithful || r->baseline->unprofiled_step_ns <= 0 || rr.remedy.empty()) continue;
        const int64_t s = replay_saving_ns(*r, rr.remedy);
        if (s > best) best = s, best_rank = rr.rank, best_step = r->baseline->unprofiled_step_ns;
      }
    }
    if (best < 0) continue;
    f.estimated_saving_us = static_cast<double>(best) / 1000.0;
    f.estimated_saving_pct = std::min(100.0, 100.0 * static_cast<double>(best) / static_cast<double>(best_step));
    f.saving_rank = best_rank;
    f.saving_basis = SavingBasis::kReplay;
    f.severity = severity_for_saving(f.estimated_saving_pct);
  }
}

std::vector<int64_t> combined_savings(const std::vector<Finding>& findings, const std::vector<RankReplayInputs>& ranks) {
  std::vector<const Finding*> all;
  for (const Finding& f : findings) all.push_back(&f);
  return combined_savings(all, ranks);
}

std::vector<int64_t> combined_savings(const std::vector<const Finding*>& findings,
                                      const std::vector<RankReplayInputs>& ranks) {
  std::vector<int64_t> out;
  for (const RankReplayInputs& r : ranks) {
    if (!r.faithful || r.baseline->unprofiled_step_ns <= 0) {
      out.push_back(-1);
      continue;
    }
    whatif::Remedy all;
    for (const Finding* f : findings)
      if (f->saves_time)
        for (const RankRemedy& rr : f->remedies)
          if (rr.rank == r.rank) all.merge(rr.remedy);
    out.push_back(all.empty() ? 0 : replay_saving_ns(r, all));
  }
  return out;
}

}  // namespace stepscope::diagnose
