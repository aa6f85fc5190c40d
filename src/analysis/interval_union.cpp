#include "analysis/interval_union.h"

namespace stepscope::analysis {

int64_t UnionList::length() const {
  int64_t total = 0;
  for (const auto& i : merged_) total += i.end_ns - i.start_ns;
  return total;
}

int64_t intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  // Two-pointer sweep: advance whichever interval ends first.
  int64_t total = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t lo = std::max(a[i].start_ns, b[j].start_ns);
    int64_t hi = std::min(a[i].end_ns, b[j].end_ns);
    if (hi > lo) total += hi - lo;
    if (a[i].end_ns < b[j].end_ns) {
      ++i;
    } else {
      ++j;
    }
  }
  return total;
}

}  // namespace stepscope::analysis
