// A set of time ranges (the union of possibly overlapping host spans, e.g.
// every DataLoader __next__ call), built once and then asked many times "how
// much of [a, b) do you cover?" in O(log n).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/interval_union.h"

namespace stepscope::diagnose {

using analysis::Interval;

class IntervalSet {
 public:
  IntervalSet() = default;
  // Any order, overlaps allowed; empty or reversed intervals are ignored.
  explicit IntervalSet(std::vector<Interval> intervals);

  bool empty() const { return merged_.empty(); }
  const std::vector<Interval>& intervals() const { return merged_; }
  int64_t length() const { return prefix_.empty() ? 0 : prefix_.back(); }

  // Length of [a, b) covered by the set, ns.
  int64_t overlap(int64_t a, int64_t b) const;

  // Splits [a, b) into the parts inside the set and the parts outside,
  // appending both in time order.
  void split(int64_t a, int64_t b, std::vector<Interval>& inside, std::vector<Interval>& outside) const;

  // The merged interval holding t, or nullptr.
  const Interval* find(int64_t t) const;

 private:
  std::vector<Interval> merged_;  // disjoint, sorted, non-touching
  std::vector<int64_t> prefix_;   // prefix_[i] = total length of merged_[0..i]
};

}  // namespace stepscope::diagnose
