// The GPU timeline's order, (start, end, row), whichever way its activities
// arrive: from the time-sorted store (only runs of equal starts to order) or
// from a builder that hands them over in any order.
#include "analysis/gpu_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>

#include "analysis_fixtures.h"

namespace stepscope::analysis {
namespace {

using namespace testing_support;

bool in_timeline_order(const GpuTimeline& t) {
  return std::is_sorted(t.activities.begin(), t.activities.end(), [](const GpuActivity& a, const GpuActivity& b) {
    return std::tie(a.start_ns, a.end_ns, a.row) < std::tie(b.start_ns, b.end_ns, b.row);
  });
}

TEST(GpuTimeline, EqualStartsAreOrderedByEnd) {
  // Three kernels start together on different streams, longest first in the
  // file; one starts earlier and one later.
  auto store = load_inline({
      kernel("k_long", 1000, 900, 7, -1),
      kernel("k_mid", 1000, 500, 8, -1),
      kernel("k_short", 1000, 100, 9, -1),
      kernel("k_first", 0, 50, 7, -1),
      kernel("k_last", 3000, 50, 7, -1),
  });
  GpuTimeline t = build_gpu_timeline(*store, {});
  ASSERT_EQ(t.activities.size(), 5u);
  std::vector<std::string> names;
  for (const GpuActivity& a : t.activities) names.emplace_back(store->strings.get(a.name));
  EXPECT_EQ(names, (std::vector<std::string>{"k_first", "k_short", "k_mid", "k_long", "k_last"}));
  EXPECT_TRUE(in_timeline_order(t));
}

TEST(GpuTimeline, ActivitiesInAnyOrderAreSorted) {
  // What a custom builder may hand over: shuffled, with ties on start and on
  // (start, end).
  auto store = load_inline({kernel("k", 0, 10, 7, -1)});
  std::random_device seed;
  std::mt19937 rng(seed());
  GpuTimeline t;
  for (uint32_t i = 0; i < 2000; ++i) {
    GpuActivity a;
    a.start_ns = static_cast<int64_t>(rng() % 300);
    a.end_ns = a.start_ns + static_cast<int64_t>(rng() % 4);
    a.row = 0;  // every activity names the store's one row (for its lane)
    t.activities.push_back(a);
  }
  std::shuffle(t.activities.begin(), t.activities.end(), rng);
  finalize_gpu_timeline(*store, t);
  EXPECT_TRUE(in_timeline_order(t));
  EXPECT_EQ(t.activities.size(), 2000u);
  ASSERT_EQ(t.lanes.size(), 1u);
}

}  // namespace
}  // namespace stepscope::analysis
