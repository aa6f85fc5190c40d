// numpy 1.24's default argsort (kind="quicksort"), reproduced for its order of
// equal keys. HTA sorts through pandas sort_values, which calls this sort; it
// is not stable, and in several HTA analyses the order of equal timestamps
// changes the result (a zero-length overlap row appears or not, a
// negative-duration kernel merges or not). std::sort and std::stable_sort give
// other permutations, so every place the HTA spec says "sort_unstable" uses
// this.
//
// The algorithm is numpy's introsort (npysort/quicksort.cpp, aquicksort_):
//   * median-of-3 pivot, Hoare-style partition around it;
//   * partitions of 16 elements or fewer finish with insertion sort;
//   * the larger side is pushed on a stack, the smaller one is sorted next;
//   * a depth budget of 2*floor(log2 n) partitions; once it runs out, the
//     partition is finished with heapsort.
// Keys must not be NaN (pandas moves NaN keys last before sorting; HTA's keys
// here never are NaN).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace stepscope::analysis::hta {

// The permutation numpy.argsort(keys, kind="quicksort") returns.
std::vector<uint32_t> numpy_argsort(std::span<const double> keys);

// Applies a permutation: out[i] = values[order[i]].
template <typename T>
std::vector<T> take(const std::vector<T>& values, const std::vector<uint32_t>& order) {
  std::vector<T> out;
  out.reserve(order.size());
  for (uint32_t k : order) out.push_back(values[k]);
  return out;
}

}  // namespace stepscope::analysis::hta
