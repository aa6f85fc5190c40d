#include "plan/batch_pareto.h"

#include <algorithm>
#include <numeric>

namespace stepscope::plan {

std::vector<size_t> pareto_front(const std::vector<BatchPoint>& points) {
  std::vector<size_t> order(points.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (points[a].memory_bytes != points[b].memory_bytes) return points[a].memory_bytes < points[b].memory_bytes;
    return points[a].tokens_per_second > points[b].tokens_per_second;
  });
  std::vector<size_t> front;
  for (size_t i : order) {
    // Everything before i uses no more memory; i survives only by being faster
    // than all of them (a point with equal memory and throughput came first).
    if (front.empty() || points[i].tokens_per_second > points[front.back()].tokens_per_second) front.push_back(i);
  }
  return front;
}

}  // namespace stepscope::plan
