// Small helpers every detector uses: locating a time in a step, the host
// idle left unclaimed, and building examples from store rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "diagnose/detector.h"
#include "diagnose/detector_part.h"

namespace stepscope::diagnose {

// Mean over a rank's steps of its per-step times, µs.
double mean_us(const std::vector<int64_t>& per_step);

// Index of the attribution step whose window holds t, or -1.
int32_t step_index_at(const RankAttribution& a, int64_t t);
// ProfilerStep number of the window holding t, or -1.
int64_t step_number_at(const RankAttribution& a, int64_t t);

// An example for a store row: its start, duration, name, step and rank.
Example example_of_row(const RankView& r, uint32_t row, std::string detail);

// Per step, the host_overhead idle of the rank that lies in `within` (all of
// it when `within` is null) and outside the intervals earlier detectors
// claimed; appends the intervals it counted to `counted` when given.
std::vector<int64_t> unclaimed_host_idle(const RankContext& rc, const IntervalSet* within,
                                         std::vector<Interval>* counted = nullptr);

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
