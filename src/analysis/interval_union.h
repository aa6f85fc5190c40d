// Lengths of unions of time intervals, the building block of every "time
// covered by X" metric. Intervals must be added in non-decreasing start
// order (the GPU timeline's order), which makes each union one pass.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace stepscope::analysis {

struct Interval {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// Running union length; intervals that touch or overlap merge.
class UnionLength {
 public:
  void add(int64_t start_ns, int64_t end_ns) {
    if (!open_) {
      cur_ = {start_ns, end_ns};
      open_ = true;
    } else if (start_ns > cur_.end_ns) {
      closed_ += cur_.end_ns - cur_.start_ns;
      cur_ = {start_ns, end_ns};
    } else {
      cur_.end_ns = std::max(cur_.end_ns, end_ns);
    }
  }
  int64_t length() const { return closed_ + (open_ ? cur_.end_ns - cur_.start_ns : 0); }

 private:
  Interval cur_;
  bool open_ = false;
  int64_t closed_ = 0;
};

// The union as a list of disjoint intervals in time order.
class UnionList {
 public:
  void add(int64_t start_ns, int64_t end_ns) {
    if (merged_.empty() || start_ns > merged_.back().end_ns) {
      merged_.push_back({start_ns, end_ns});
    } else {
      merged_.back().end_ns = std::max(merged_.back().end_ns, end_ns);
    }
  }
  const std::vector<Interval>& intervals() const { return merged_; }
  int64_t length() const;

 private:
  std::vector<Interval> merged_;
};

// Length of the intersection of two disjoint, time-ordered interval lists.
int64_t intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace stepscope::analysis
