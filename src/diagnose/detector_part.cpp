#include "diagnose/detector_part.h"

#include <algorithm>

#include "analysis/saturating.h"
#include "diagnose/detector_support.h"

namespace stepscope::diagnose {

RankSaving RankSaving::of(const RankView& r, const std::vector<int64_t>& per_step, size_t skip_first) {
  const RankAttribution& a = *r.attribution;
  std::vector<int64_t> walls;
  walls.reserve(a.steps.size());
  for (const StepAttribution& s : a.steps) walls.push_back(s.wall_ns());
  return of_steps(r.store->rank, walls, a.mean_step_ns(), per_step, skip_first);
}

RankSaving RankSaving::of_steps(int64_t rank, const std::vector<int64_t>& step_walls, int64_t mean_step_ns,
                                const std::vector<int64_t>& per_step, size_t skip_first) {
  RankSaving s;
  if (step_walls.empty()) return s;
  // Cap each step at its own wall time: a cause cannot save more than the step.
  const size_t first = per_step.size() > skip_first ? skip_first : 0;
  std::vector<int64_t> capped, walls;
  for (size_t k = first; k < per_step.size() && k < step_walls.size(); ++k) {
    capped.push_back(std::clamp<int64_t>(per_step[k], 0, step_walls[k]));
    walls.push_back(step_walls[k]);
  }
  const double mean_step_us = static_cast<double>(mean_step_ns) / 1000.0;
  s.valid = true;
  s.rank = rank;
  s.us = std::min(mean_us(capped), mean_step_us);
  // Against the mean of the same steps, never above the rank's mean step.
  s.step_us = std::min(mean_us(walls), mean_step_us);
  return s;
}

void RankSaving::merge(const RankSaving& later_rank) {
  if (later_rank.valid && (!valid || later_rank.us > us)) *this = later_rank;
}

void RankSaving::apply_to(Finding& f) const {
  if (valid) {
    f.estimated_saving_us = us;
    f.estimated_saving_pct = step_us > 0 ? std::min(100.0, 100.0 * us / step_us) : 0.0;
    f.saving_rank = rank;
  } else {
    f.estimated_saving_us = 0;
    f.estimated_saving_pct = 0;
  }
  f.severity = severity_for_saving(f.estimated_saving_pct);
}

void FindingPart::merge_common(const FindingPart& o) {
  saving.merge(o.saving);
  if (o.replay.rank >= 0 && (replay.rank < 0 || o.replay.saving_ns > replay.saving_ns)) replay = o.replay;
  examples.merge(o.examples);
  claims.insert(claims.end(), o.claims.begin(), o.claims.end());
  remedies.insert(remedies.end(), o.remedies.begin(), o.remedies.end());
}

void FindingPart::fill(Finding& f) const {
  saving.apply_to(f);
  f.claims = claims;
  f.remedies = remedies;
  f.evidence.examples = examples.best();
  f.replay_pick = replay;
}

void FindingPart::set_rank(int64_t rank) {
  if (saving.valid) saving.rank = rank;
  if (replay.rank >= 0) replay.rank = rank;
  examples.set_rank(rank);
}

void ExamplePool::set_rank(int64_t rank) {
  for (Weighted& w : candidates_) w.example.rank = rank;
}

void add_counts(std::map<std::string, int64_t>& to, const std::map<std::string, int64_t>& from) {
  for (const auto& [name, n] : from) analysis::add_into(to[name], n);
}

namespace {
template <class W>
void keep_best(std::vector<W>& v) {
  std::stable_sort(v.begin(), v.end(), [](const W& a, const W& b) { return a.weight > b.weight; });
  if (v.size() > kMaxExamples) v.resize(kMaxExamples);
}
}  // namespace

void ExamplePool::trim() { keep_best(candidates_); }

void ExamplePool::merge(const ExamplePool& later_rank) {
  candidates_.insert(candidates_.end(), later_rank.candidates_.begin(), later_rank.candidates_.end());
  keep_best(candidates_);
}

std::vector<Example> ExamplePool::best() const {
  std::vector<Weighted> v = candidates_;
  keep_best(v);
  std::vector<Example> out;
  for (Weighted& w : v) out.push_back(std::move(w.example));
  return out;
}

}  // namespace stepscope::diagnose
