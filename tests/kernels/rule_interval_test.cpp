// rule_interval against ElementRule::allows, the rule it stands for: for
// every rule shape (causal or not, no window, windows of 1 and more) and
// tokens on both sides, a pair is in the interval exactly when the rule
// allows it, seen from the query and from the key. document_spans likewise
// with documents: its run intersected with the interval holds exactly the
// pairs the rule with documents allows, where documents are packed whole.
#include "kernels/rule_interval.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "kernels/block_mask.h"
#include "kernels/document_spans.h"

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

TEST(DocumentSpans, WithTheIntervalHoldExactlyThePairsTheRuleAllows) {
  // Packed documents of 1, 9, 40, 3 and 67 tokens, ids not in order.
  std::vector<int32_t> ids;
  const int32_t lengths[][2] = {{7, 1}, {2, 9}, {5, 40}, {0, 3}, {9, 67}};
  for (const auto& [id, length] : lengths) ids.insert(ids.end(), length, id);
  const std::vector<int32_t> spans = document_spans(ids.data(), static_cast<int64_t>(ids.size()));
  ASSERT_EQ(spans.size(), 2 * ids.size());
  const int64_t n = static_cast<int64_t>(ids.size());
  for (bool causal : {false, true})
    for (int64_t window : {0, 1, 5, 30}) {
      ElementRule rule;
      rule.causal = causal;
      rule.window = window;
      rule.doc_ids = ids;
      for (int64_t a = 0; a < n; ++a)
        for (int64_t b = 0; b < n; ++b) {
          SCOPED_TRACE("causal " + std::to_string(causal) + " window " + std::to_string(window) + " tokens " +
                       std::to_string(a) + ", " + std::to_string(b));
          for (bool a_is_key : {false, true}) {
            TokenInterval met = rule_interval(a, a_is_key, causal, window);
            met.first = std::max<int64_t>(met.first, spans[2 * a]);
            met.last = std::min<int64_t>(met.last, spans[2 * a + 1]);
            EXPECT_EQ(met.first <= b && b <= met.last, a_is_key ? rule.allows(b, a) : rule.allows(a, b));
          }
        }
    }
}

TEST(DocumentSpans, AreEmptyWhereADocumentIsNotOneRun) {
  const std::vector<int32_t> packed = {4, 4, 1, 1, 1, 4 + 1};
  const std::vector<int32_t> expected = {0, 1, 0, 1, 2, 4, 2, 4, 2, 4, 5, 5};
  EXPECT_EQ(document_spans(packed.data(), 6), expected);
  const std::vector<int32_t> split = {4, 4, 1, 1, 4, 4};  // document 4 in two runs
  EXPECT_TRUE(document_spans(split.data(), 6).empty());
  const std::vector<int32_t> strided = {0, 1, 2, 0, 1, 2};
  EXPECT_TRUE(document_spans(strided.data(), 6).empty());
  EXPECT_TRUE(document_spans(packed.data(), 0).empty());
  const std::vector<int32_t> one = {3};
  EXPECT_EQ(document_spans(one.data(), 1), (std::vector<int32_t>{0, 0}));
}

}  // namespace
}  // namespace stepscope::kernels
