// Matching findings by (category, detector) on hand-made findings: resolved,
// new, persisting, the reporting bar, and several findings of one detector.
#include <gtest/gtest.h>

#include "diff/finding_diff.h"

namespace stepscope::diff {
namespace {

using diagnose::Category;
using diagnose::Finding;

Finding finding(Category c, std::string detector, double saving_us, double pct) {
  Finding f;
  f.category = c;
  f.detector = std::move(detector);
  f.title = f.detector + " title";
  f.estimated_saving_us = saving_us;
  f.estimated_saving_pct = pct;
  f.severity = diagnose::severity_for_saving(pct);
  return f;
}

TEST(FindingDiff, ResolvedNewPersisting) {
  std::vector<Finding> before = {finding(Category::kMemoryAllocator, "memory_allocator", 5800, 13.6),
                                 finding(Category::kFusionOpportunity, "fusion_opportunity", 6800, 16.0)};
  std::vector<Finding> after = {finding(Category::kFusionOpportunity, "fusion_opportunity", 5500, 21.0),
                                finding(Category::kRecomputedConstants, "recomputed_constants", 2100, 8.4)};
  auto d = diff_findings(before, {}, after, {});
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].change, FindingChange::kResolved);
  EXPECT_EQ(d[0].category, Category::kMemoryAllocator);
  EXPECT_TRUE(d[0].before.reported);
  EXPECT_FALSE(d[0].after.present);
  EXPECT_DOUBLE_EQ(d[0].saving_change_us, -5800);
  EXPECT_EQ(d[1].change, FindingChange::kNew);
  EXPECT_EQ(d[1].category, Category::kRecomputedConstants);
  EXPECT_FALSE(d[1].before.present);
  EXPECT_EQ(d[2].change, FindingChange::kPersisting);
  EXPECT_DOUBLE_EQ(d[2].before.saving_us, 6800);
  EXPECT_DOUBLE_EQ(d[2].after.saving_us, 5500);
  EXPECT_DOUBLE_EQ(d[2].saving_change_us, -1300);
}

TEST(FindingDiff, DroppingBelowTheBarIsResolvedAndKeepsTheRest) {
  std::vector<Finding> before = {finding(Category::kHostOverhead, "host_overhead", 2320, 6.7)};
  std::vector<Finding> after_minor = {finding(Category::kHostOverhead, "host_overhead", 657, 2.5)};
  auto d = diff_findings(before, {}, {}, after_minor);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].change, FindingChange::kResolved);
  EXPECT_TRUE(d[0].after.present);
  EXPECT_FALSE(d[0].after.reported);
  EXPECT_DOUBLE_EQ(d[0].after.saving_us, 657);
  // And the other way round: a minor cause that grows past the bar is new.
  d = diff_findings({}, after_minor, before, {});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].change, FindingChange::kNew);
  EXPECT_TRUE(d[0].before.present);
}

TEST(FindingDiff, MinorOnBothSidesIsLeftOut) {
  std::vector<Finding> minor = {finding(Category::kHostSync, "host_sync", 100, 0.5)};
  EXPECT_TRUE(diff_findings({}, minor, {}, minor).empty());
}

TEST(FindingDiff, SeveralFindingsOfOneDetectorPairInSavingOrder) {
  std::vector<Finding> before = {finding(Category::kCommunication, "communication", 900, 9),
                                 finding(Category::kCommunication, "communication", 3000, 30)};
  std::vector<Finding> after = {finding(Category::kCommunication, "communication", 1000, 12)};
  auto d = diff_findings(before, {}, after, {});
  ASSERT_EQ(d.size(), 2u);
  // The largest before pairs with the only after; the smaller one is resolved.
  EXPECT_EQ(d[0].change, FindingChange::kResolved);
  EXPECT_DOUBLE_EQ(d[0].before.saving_us, 900);
  EXPECT_EQ(d[1].change, FindingChange::kPersisting);
  EXPECT_DOUBLE_EQ(d[1].before.saving_us, 3000);
  EXPECT_DOUBLE_EQ(d[1].after.saving_us, 1000);
}

TEST(FindingDiff, SameDetectorNameInAnotherCategoryIsAnotherKey) {
  std::vector<Finding> before = {finding(Category::kHostOverhead, "x", 1000, 10)};
  std::vector<Finding> after = {finding(Category::kHostSync, "x", 1000, 10)};
  auto d = diff_findings(before, {}, after, {});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].change, FindingChange::kResolved);
  EXPECT_EQ(d[1].change, FindingChange::kNew);
}

}  // namespace
}  // namespace stepscope::diff
