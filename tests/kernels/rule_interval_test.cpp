// rule_interval against ElementRule::allows, the rule it stands for: for
// every rule shape (causal or not, no window, windows of 1 and more) and
// tokens on both sides, a pair is in the interval exactly when the rule
// allows it, seen from the query and from the key.
#include "kernels/rule_interval.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "kernels/block_mask.h"

namespace stepscope::kernels {
namespace {

TEST(RuleInterval, HoldsExactlyThePairsTheRuleAllows) {
  for (bool causal : {false, true})
    for (int64_t window : {0, 1, 2, 7, 64, 300}) {
      ElementRule rule;
      rule.causal = causal;
      rule.window = window;
      for (int64_t a = 0; a < 200; a += 3)
        for (int64_t b = 0; b < 200; ++b) {
          SCOPED_TRACE("causal " + std::to_string(causal) + " window " + std::to_string(window) + " tokens " +
                       std::to_string(a) + ", " + std::to_string(b));
          const TokenInterval of_query = rule_interval(a, false, causal, window);  // keys b of query a
          EXPECT_EQ(of_query.first <= b && b <= of_query.last, rule.allows(a, b));
          const TokenInterval of_key = rule_interval(a, true, causal, window);  // queries b of key a
          EXPECT_EQ(of_key.first <= b && b <= of_key.last, rule.allows(b, a));
        }
    }
}

TEST(RuleInterval, IsUnboundedWhereTheRuleIs) {
  EXPECT_EQ(rule_interval(5, false, false, 0).first, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(rule_interval(5, false, false, 0).last, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(rule_interval(5, false, true, 0).last, 5);   // a causal query meets keys up to itself
  EXPECT_EQ(rule_interval(5, true, true, 0).first, 5);   // a causal key is met by queries from itself on
  EXPECT_EQ(rule_interval(5, true, true, 3).last, 7);    // ... up to window − 1 later
}

}  // namespace
}  // namespace stepscope::kernels
