#include "diagnose/interval_set.h"

#include <algorithm>
#include "analysis/saturating.h"

namespace stepscope::diagnose {

using analysis::add_into;

IntervalSet::IntervalSet(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& i) { return i.end_ns <= i.start_ns; });
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& x, const Interval& y) { return x.start_ns < y.start_ns; });
  for (const Interval& i : intervals) {
    if (!merged_.empty() && i.start_ns <= merged_.back().end_ns) {
      merged_.back().end_ns = std::max(merged_.back().end_ns, i.end_ns);
    } else {
      merged_.push_back(i);
    }
  }
  prefix_.reserve(merged_.size());
  int64_t total = 0;
  for (const Interval& i : merged_) {
    add_into(total, i.end_ns - i.start_ns);
    prefix_.push_back(total);
  }
}

int64_t IntervalSet::overlap(int64_t a, int64_t b) const {
  if (b <= a || merged_.empty()) return 0;
  // First interval ending after a; last interval starting before b.
  auto first = std::upper_bound(merged_.begin(), merged_.end(), a,
                                [](int64_t t, const Interval& i) { return t < i.end_ns; });
  auto last = std::lower_bound(merged_.begin(), merged_.end(), b,
                               [](const Interval& i, int64_t t) { return i.start_ns < t; });
  if (first >= last) return 0;
  size_t f = static_cast<size_t>(first - merged_.begin());
  size_t l = static_cast<size_t>(last - merged_.begin()) - 1;
  int64_t total = prefix_[l] - (f == 0 ? 0 : prefix_[f - 1]);
  // Trim the partial ends.
  total -= std::max<int64_t>(0, a - merged_[f].start_ns);
  total -= std::max<int64_t>(0, merged_[l].end_ns - b);
  return total;
}

void IntervalSet::split(int64_t a, int64_t b, std::vector<Interval>& inside, std::vector<Interval>& outside) const {
  if (b <= a) return;
  auto it = std::upper_bound(merged_.begin(), merged_.end(), a,
                             [](int64_t t, const Interval& i) { return t < i.end_ns; });
  int64_t cur = a;
  for (; it != merged_.end() && it->start_ns < b; ++it) {
    int64_t lo = std::max(it->start_ns, a);
    int64_t hi = std::min(it->end_ns, b);
    if (lo > cur) outside.push_back({cur, lo});
    if (hi > lo) inside.push_back({lo, hi});
    cur = std::max(cur, hi);
  }
  if (cur < b) outside.push_back({cur, b});
}

const Interval* IntervalSet::find(int64_t t) const {
  auto it = std::upper_bound(merged_.begin(), merged_.end(), t,
                             [](int64_t x, const Interval& i) { return x < i.end_ns; });
  if (it == merged_.end() || it->start_ns > t) return nullptr;
  return &*it;
}

}  // namespace stepscope::diagnose
