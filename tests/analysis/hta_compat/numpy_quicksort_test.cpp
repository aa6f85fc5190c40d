// numpy_argsort must return numpy's permutation, ties included. Every
// expected permutation here was computed with numpy 1.24.4's own
// np.argsort(kind="quicksort") (numpy 1.26.4 gives the same), not with a port.
#include "analysis/hta_compat/numpy_quicksort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace stepscope::analysis::hta {
namespace {

std::vector<uint32_t> argsort(const std::vector<double>& v) { return numpy_argsort(v); }

TEST(hta_numpy_argsort, EmptyAndSingle) {
  EXPECT_TRUE(argsort({}).empty());
  EXPECT_EQ(argsort({4.0}), (std::vector<uint32_t>{0}));
}

TEST(hta_numpy_argsort, SmallArrayUsesInsertionSort) {
  // 8 keys: one insertion sort pass, which keeps equal keys in input order.
  EXPECT_EQ(argsort({3, 1, 2, 1, 3, 0, 2, 1}), (std::vector<uint32_t>{5, 1, 3, 7, 2, 6, 0, 4}));
}

TEST(hta_numpy_argsort, SeventeenKeysArePartitioned) {
  // numpy partitions while pr - pl > 15 (SMALL_QUICKSORT): 17 keys are the
  // smallest array it partitions rather than insertion-sorts. An insertion
  // sort would return the stable order; numpy does not.
  const std::vector<double> keys = {3, 0, 0, 0, 0, 3, 3, 2, 0, 0, 1, 1, 2, 1, 1, 0, 2};
  EXPECT_EQ(argsort(keys), (std::vector<uint32_t>{8, 1, 2, 3, 4, 15, 9, 14, 13, 10, 11, 12, 16, 7, 6, 5, 0}));
  EXPECT_NE(argsort(keys), (std::vector<uint32_t>{1, 2, 3, 4, 8, 9, 15, 10, 11, 13, 14, 7, 12, 16, 0, 5, 6}));
}

TEST(hta_numpy_argsort, PartitionReordersTies) {
  // 24 keys: one median-of-3 partition, then insertion sorts. Equal keys end
  // up out of input order (a stable sort would start 8, 10, 0, 3, ...).
  const std::vector<double> keys = {1, 4, 4, 1, 2, 4, 3, 4, 0, 4, 0, 3, 2, 4, 1, 1, 3, 4, 4, 3, 3, 1, 1, 1};
  const std::vector<uint32_t> numpy = {10, 8, 0, 21, 15, 14, 22, 23, 3, 4, 12, 6,
                                       16, 19, 20, 11, 9, 5, 13, 2, 17, 18, 1, 7};
  EXPECT_EQ(argsort(keys), numpy);
  std::vector<uint32_t> stable(keys.size());
  std::iota(stable.begin(), stable.end(), 0);
  std::stable_sort(stable.begin(), stable.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  EXPECT_NE(stable, numpy);
}

TEST(hta_numpy_argsort, DepthLimitFallsBackToHeapsort) {
  // Musser's median-of-3 killer for n = 1000, halved to create ties: the depth
  // budget (2 * floor(log2 1000) = 18) runs out and two partitions finish in
  // heapsort. The whole permutation is checked through a 64-bit FNV-1a hash.
  const int n = 1000, k = n / 2;
  std::vector<double> keys(n, 0);
  for (int i = 1; i <= k; ++i) {
    if (i % 2 == 1) {
      keys[i - 1] = i;
      keys[i] = k + i;
    }
    keys[k + i - 1] = 2 * i;
  }
  for (auto& v : keys) v = static_cast<double>(static_cast<int>(v) / 2);
  const auto order = argsort(keys);
  ASSERT_EQ(order.size(), keys.size());
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; }));
  EXPECT_EQ(std::vector<uint32_t>(order.begin(), order.begin() + 12),
            (std::vector<uint32_t>{0, 2, 500, 4, 501, 6, 502, 8, 503, 10, 504, 12}));
  uint64_t hash = 1469598103934665603ULL;
  for (uint32_t i : order) {
    hash ^= i;
    hash *= 1099511628211ULL;
  }
  EXPECT_EQ(hash, 0xf5a516bf43bbce37ULL);
}

TEST(hta_numpy_argsort, TakeAppliesThePermutation) {
  const std::vector<int> values = {10, 20, 30};
  EXPECT_EQ(take(values, std::vector<uint32_t>{2, 0, 1}), (std::vector<int>{30, 10, 20}));
}

}  // namespace
}  // namespace stepscope::analysis::hta
