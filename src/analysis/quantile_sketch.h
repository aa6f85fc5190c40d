// A mergeable quantile sketch of non-negative durations with a relative
// error bound (the DDSketch construction: Masson, Rim and Lee, "DDSketch: A
// Fast and Fully-Mergeable Quantile Sketch with Relative-Error Guarantees",
// VLDB 2019). Values fall in logarithmic buckets (gamma^(i-1), gamma^i] with
// gamma = (1 + a) / (1 - a); a bucket's representative 2 gamma^i / (gamma + 1)
// is within a relative error a of every value in it. Merging adds bucket
// counts, so a sketch of the union of two sets is exactly the merge of their
// sketches, in any order: what lets per-rank summaries give job-wide
// percentiles.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace stepscope::analysis {

class QuantileSketch {
 public:
  static constexpr double kRelativeError = 0.01;  // a: every quantile within 1% of the sample it stands for

  void add(int64_t value_ns);  // negative values count as 0
  void merge(const QuantileSketch& other);

  // The q-quantile (0 <= q <= 1) of the values added: within kRelativeError
  // of the sample of rank floor(q * (n - 1)) in sorted order (0-based), and
  // inside [min, max]. 0 for an empty sketch.
  double quantile(double q) const;

  uint64_t count() const { return zeros_ + in_buckets_; }
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }

  // The state, for a summary file: zero values, then (bucket index, count)
  // sorted by index, each count > 0; and the exact extremes.
  uint64_t zeros() const { return zeros_; }
  const std::vector<std::pair<int32_t, uint64_t>>& buckets() const { return buckets_; }
  // Rebuilds a sketch from that state; false (the sketch left empty) when it
  // breaks the rules above (indices out of order or out of range, a zero
  // count, min > max).
  bool restore(uint64_t zeros, std::vector<std::pair<int32_t, uint64_t>> buckets, int64_t min, int64_t max);

  // The bucket a positive value falls in.
  static int32_t index_of(int64_t value_ns);

 private:
  uint64_t zeros_ = 0;
  uint64_t in_buckets_ = 0;
  std::vector<std::pair<int32_t, uint64_t>> buckets_;  // sorted by index
  int64_t min_ = 0;
  int64_t max_ = 0;
};

}  // namespace stepscope::analysis
