// The quantile sketch: every quantile within its stated relative error of
// the exact order statistic, on fresh random durations of several shapes;
// merging sketches is exactly sketching the union, in any order; a state
// that breaks the rules is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "analysis/quantile_sketch.h"

namespace stepscope::analysis {
namespace {

// The sample of rank floor(q (n - 1)) (0-based): what the sketch stands for.
double exact(std::vector<int64_t> v, double q) {
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[static_cast<size_t>(std::floor(q * static_cast<double>(v.size() - 1)))]);
}

std::vector<int64_t> durations(std::mt19937_64& rng, int shape, size_t n) {
  std::vector<int64_t> v(n);
  std::lognormal_distribution<double> kernel(std::log(20'000.0), 1.2);  // kernels: ~20 µs, heavy tail
  std::uniform_int_distribution<int64_t> flat(0, 5'000'000);
  std::exponential_distribution<double> gaps(1.0 / 3'000.0);
  for (auto& x : v) {
    if (shape == 0) x = static_cast<int64_t>(kernel(rng));
    if (shape == 1) x = flat(rng);
    if (shape == 2) x = static_cast<int64_t>(gaps(rng));  // many small values, some 0
  }
  return v;
}

TEST(QuantileSketch, QuantilesWithinTheRelativeErrorOnFreshRandomData) {
  std::random_device seed;
  const uint64_t s = (static_cast<uint64_t>(seed()) << 32) | seed();
  std::mt19937_64 rng(s);
  for (int shape = 0; shape < 3; ++shape) {
    for (size_t n : {1u, 2u, 17u, 1000u, 100'000u}) {
      const std::vector<int64_t> v = durations(rng, shape, n);
      QuantileSketch q;
      for (int64_t x : v) q.add(x);
      ASSERT_EQ(q.count(), n);
      EXPECT_EQ(q.min(), *std::min_element(v.begin(), v.end()));
      EXPECT_EQ(q.max(), *std::max_element(v.begin(), v.end()));
      for (double p : {0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0}) {
        const double want = exact(v, p), got = q.quantile(p);
        EXPECT_LE(std::abs(got - want), QuantileSketch::kRelativeError * want + 1e-9)
            << "seed " << s << " shape " << shape << " n " << n << " q " << p << ": " << got << " for " << want;
      }
    }
  }
}

TEST(QuantileSketch, MergeIsTheSketchOfTheUnionInAnyOrder) {
  std::mt19937_64 rng(7);
  std::vector<std::vector<int64_t>> parts;
  for (int k = 0; k < 5; ++k) parts.push_back(durations(rng, k % 3, 500 + 300 * k));
  QuantileSketch whole;
  std::vector<QuantileSketch> each(parts.size());
  for (size_t k = 0; k < parts.size(); ++k)
    for (int64_t x : parts[k]) {
      whole.add(x);
      each[k].add(x);
    }
  QuantileSketch forward, backward, tree_left, tree_right;
  for (size_t k = 0; k < each.size(); ++k) forward.merge(each[k]);
  for (size_t k = each.size(); k-- > 0;) backward.merge(each[k]);
  tree_left.merge(each[0]);
  tree_left.merge(each[1]);
  tree_right.merge(each[2]);
  tree_right.merge(each[3]);
  tree_right.merge(each[4]);
  tree_left.merge(tree_right);
  for (const QuantileSketch* m : {&forward, &backward, &tree_left}) {
    EXPECT_EQ(m->buckets(), whole.buckets());
    EXPECT_EQ(m->zeros(), whole.zeros());
    EXPECT_EQ(m->min(), whole.min());
    EXPECT_EQ(m->max(), whole.max());
    EXPECT_EQ(m->count(), whole.count());
  }
}

TEST(QuantileSketch, EmptyZeroAndNegativeValues) {
  QuantileSketch q;
  EXPECT_EQ(q.quantile(0.5), 0.0);
  q.add(0);
  q.add(-5);  // counted as 0
  q.add(1000);
  EXPECT_EQ(q.count(), 3u);
  EXPECT_EQ(q.zeros(), 2u);
  EXPECT_EQ(q.quantile(0.5), 0.0);
  EXPECT_NEAR(q.quantile(1.0), 1000.0, 10.0);
}

TEST(QuantileSketch, RestoreRefusesBrokenStates) {
  QuantileSketch q;
  EXPECT_TRUE(q.restore(1, {{3, 2}, {10, 1}}, 0, 50));
  EXPECT_EQ(q.count(), 4u);
  EXPECT_FALSE(q.restore(0, {{10, 1}, {3, 2}}, 0, 50));      // out of order
  EXPECT_FALSE(q.restore(0, {{3, 1}, {3, 2}}, 0, 50));       // repeated index
  EXPECT_FALSE(q.restore(0, {{3, 0}}, 0, 50));               // an empty bucket
  EXPECT_FALSE(q.restore(0, {{1'000'000, 1}}, 0, 50));       // past any int64 duration
  EXPECT_FALSE(q.restore(0, {{3, 1}}, 60, 50));              // min > max
  EXPECT_EQ(q.count(), 0u);                                  // a refused state leaves it empty
}

}  // namespace
}  // namespace stepscope::analysis
