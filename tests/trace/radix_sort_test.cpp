// The radix sort that orders rows by time and join keys: it must give exactly
// what std::stable_sort gives by the same key (order and tie order), whatever
// the keys' spread, and ignore the bits below low_bit.
#include "trace/radix_sort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace stepscope::trace {
namespace {

struct Rec {
  uint64_t key;
  uint32_t original;  // position before the sort, to check tie order
};

std::vector<Rec> records(size_t n, uint64_t mask, uint64_t offset, std::mt19937_64& rng) {
  std::vector<Rec> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = {offset + (rng() & mask), static_cast<uint32_t>(i)};
  return v;
}

void expect_same_as_stable_sort(std::vector<Rec> v, int low_bit) {
  const uint64_t kept = low_bit >= 64 ? 0 : ~((uint64_t{1} << low_bit) - 1);
  std::vector<Rec> want = v;
  std::stable_sort(want.begin(), want.end(), [&](const Rec& a, const Rec& b) { return (a.key & kept) < (b.key & kept); });
  stable_radix_sort(v, [](const Rec& r) { return r.key; }, low_bit);
  ASSERT_EQ(v.size(), want.size());
  for (size_t i = 0; i < v.size(); ++i) {
    ASSERT_EQ(v[i].key, want[i].key) << "at " << i;
    ASSERT_EQ(v[i].original, want[i].original) << "tie order at " << i;
  }
}

TEST(RadixSort, MatchesStableSortOnFreshRandomKeys) {
  std::random_device seed;
  std::mt19937_64 rng(seed());
  // Sizes on both sides of the small-input path; key spreads from one byte
  // (many ties) to all 64 bits, with and without a constant high part.
  for (size_t n : {0, 1, 2, 255, 256, 257, 5000, 100000})
    for (uint64_t mask : {uint64_t{0}, uint64_t{0xff}, uint64_t{0xffff00}, uint64_t{0xfffffffff}, ~uint64_t{0}})
      for (uint64_t offset : {uint64_t{0}, uint64_t{1} << 63, uint64_t{0x1234567800000000}})
        for (int low_bit : {0, 3, 8, 13})
          expect_same_as_stable_sort(records(n, mask, offset, rng), low_bit);
}

TEST(RadixSort, NearlySortedTimesWithRowsInTheLowBits) {
  // The import's packed key: start offset above the row index. Sorting only
  // the start bits must leave equal starts in row order.
  std::random_device seed;
  std::mt19937_64 rng(seed());
  const size_t n = 50000;
  const int row_bits = 16;
  std::vector<uint64_t> keys(n);
  uint64_t t = 0;
  for (size_t i = 0; i < n; ++i) {
    t += rng() % 3000;
    const uint64_t jitter = rng() % 10 == 0 ? rng() % 5000 : 0;  // one start in ten runs late
    keys[i] = ((t + jitter) << row_bits) | i;
  }
  std::vector<uint64_t> want = keys;
  std::stable_sort(want.begin(), want.end(), [&](uint64_t a, uint64_t b) { return (a >> row_bits) < (b >> row_bits); });
  stable_radix_sort(keys, [](uint64_t k) { return k; }, row_bits);
  EXPECT_EQ(keys, want);
}

TEST(RadixSort, AllBitsIgnoredLeavesTheOrder) {
  std::vector<uint64_t> v = {5, 3, 9, 1};
  stable_radix_sort(v, [](uint64_t k) { return k; }, 64);
  EXPECT_EQ(v, (std::vector<uint64_t>{5, 3, 9, 1}));
}

}  // namespace
}  // namespace stepscope::trace
