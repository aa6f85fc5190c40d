// Small helpers every detector uses: turning per-step times into a saving,
// locating a time in a step, and building examples from store rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "diagnose/detector.h"
#include "diagnose/detector_part.h"

namespace stepscope::diagnose {

// Per rank (context order), per attribution step: ns a cause explains.
using StepTimes = std::vector<std::vector<int64_t>>;

// A StepTimes of zeros shaped like the context's steps.
StepTimes zero_step_times(const DetectorContext& ctx);

// Sets estimated_saving_us / _pct, saving_rank and severity from the rank
// whose mean per-step time is largest. Savings are capped at the step time.
// The first `skip_first` steps are left out of the mean when later steps
// exist (a detector that judges steady state skips a possible warm-up step).
void set_saving(Finding& f, const DetectorContext& ctx, const StepTimes& per_step, size_t skip_first = 0);

// Mean over a rank's steps of its per-step times, µs.
double mean_us(const std::vector<int64_t>& per_step);

// Index of the attribution step whose window holds t, or -1.
int32_t step_index_at(const RankAttribution& a, int64_t t);
// ProfilerStep number of the window holding t, or -1.
int64_t step_number_at(const RankAttribution& a, int64_t t);

// An example for a store row: its start, duration, name, step and rank.
Example example_of_row(const RankView& r, uint32_t row, std::string detail);

// The host_overhead idle of a rank that earlier findings (ctx.prior) claimed.
IntervalSet claimed_idle(const DetectorContext& ctx, int64_t rank);

// Per step, the host_overhead idle of the rank that lies in `within` (all of
// it when `within` is null) and outside the intervals earlier detectors
// claimed; appends the intervals it counted to `counted` when given.
std::vector<int64_t> unclaimed_host_idle(const RankContext& rc, const IntervalSet* within,
                                         std::vector<Interval>* counted = nullptr);
// The same for rank `ri` of a whole context, against the claims of the
// findings accepted so far (ctx.prior).
std::vector<int64_t> unclaimed_host_idle(const DetectorContext& ctx, size_t ri, const IntervalSet* within,
                                         std::vector<Interval>* counted = nullptr);

// Rank `ri` of a whole context as a split detector sees it: its view and
// the host idle ctx.prior's findings claimed on it.
RankContext rank_context(const DetectorContext& ctx, size_t ri);

// Keeps the `n` examples with the largest weight, largest first.
struct WeightedExample {
  double weight = 0;
  Example example;
};
std::vector<Example> top_examples(std::vector<WeightedExample> candidates, size_t n = kMaxExamples);

// A metric name from free text: lower case, runs of other characters as '_'.
std::string metric_key(std::string_view text);

// "12.3 ms" / "456 us" style, from ns.
std::string human_time(double ns);

}  // namespace stepscope::diagnose
