// The throughput-against-memory Pareto front over batch choices: the points
// no other point beats on both axes (more tokens/s with no more memory, or
// less memory with no less throughput).
#pragma once

#include <cstddef>
#include <vector>

namespace stepscope::plan {

struct BatchPoint {
  int global_batch = 0;      // sequences per step
  int micro_batch = 0;       // sequences per micro-batch
  double tokens_per_second = 0;
  double memory_bytes = 0;   // peak per GPU
};

// Indices of the non-dominated points, by increasing memory (and throughput).
// Point p is dominated when some q has memory <= p's and throughput >= p's,
// with one strict; of exact duplicates the first listed is kept.
// O(n log n): sort by memory then throughput descending, keep each point
// that raises the best throughput seen so far.
std::vector<std::size_t> pareto_front(const std::vector<BatchPoint>& points);

}  // namespace stepscope::plan
