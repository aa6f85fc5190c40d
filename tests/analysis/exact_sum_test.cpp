// ExactSum: the same bits whatever the order and grouping of the terms, and
// the correctly rounded sum (checked where a plain sum loses everything).
#include "analysis/exact_sum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace stepscope::analysis {
namespace {

TEST(ExactSum, KeepsWhatAPlainSumLoses) {
  ExactSum a;
  for (double x : {0.1, 1e16, -1e16}) a.add(x);
  EXPECT_EQ(a.value(), 0.1);
  ExactSum b;
  for (double x : {1e100, 1.0, -1e100, 1e-100}) b.add(x);
  EXPECT_EQ(b.value(), 1.0 + 1e-100);  // 1.0: the tiny part rounds away once, at the end
  ExactSum c;
  for (int i = 0; i < 10; ++i) c.add(0.1);
  EXPECT_EQ(c.value(), 1.0);  // a plain loop gives 0.9999999999999999
  EXPECT_EQ(ExactSum{}.value(), 0.0);
}

TEST(ExactSum, NonFiniteTermsGiveTheirSum) {
  ExactSum a;
  a.add(1.0);
  a.add(std::numeric_limits<double>::infinity());
  EXPECT_EQ(a.value(), std::numeric_limits<double>::infinity());
  a.add(-std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(a.value()));
  ExactSum big;
  big.add(std::numeric_limits<double>::max());
  big.add(std::numeric_limits<double>::max());
  EXPECT_EQ(big.value(), std::numeric_limits<double>::infinity());
}

TEST(ExactSum, OrderAndGroupingDoNotChangeTheBits) {
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> mant(-1.0, 1.0);
  std::uniform_int_distribution<int> expo(-20, 20), parts(1, 6);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<double> terms(1 + trial % 200);
    for (double& t : terms) t = std::ldexp(mant(rng), expo(rng));
    ExactSum whole;
    for (double t : terms) whole.add(t);
    // Shuffled, cut into groups summed alone, the groups merged in reverse.
    std::shuffle(terms.begin(), terms.end(), rng);
    std::vector<ExactSum> groups(static_cast<size_t>(parts(rng)));
    for (size_t i = 0; i < terms.size(); ++i) groups[i % groups.size()].add(terms[i]);
    ExactSum merged;
    for (auto it = groups.rbegin(); it != groups.rend(); ++it) merged.add(*it);
    ASSERT_EQ(whole.value(), merged.value()) << "trial " << trial;
    // Against a 113-bit sum: the terms span 2^40 times 53 bits, and 200 of
    // them add 8 bits of carries, so it is exact and one
    // rounding of it is the correctly rounded sum.
    __float128 q = 0;
    for (double t : terms) q += static_cast<__float128>(t);
    EXPECT_EQ(whole.value(), static_cast<double>(q)) << "trial " << trial;
  }
}

}  // namespace
}  // namespace stepscope::analysis
