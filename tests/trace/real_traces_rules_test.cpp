// The rules that skip impossible values (event_limits.h, negative sizes,
// unmatched B/E, shared runtime correlation ids, step numbers) come from the
// format's semantics; this checks that none of them fires on any real trace
// in ../shared (graph launches, ns-resolution, MTIA, AMD and CPU-only traces
// included). Skips when ../shared is absent.
#include <gtest/gtest.h>

#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

TEST(RealTracesRules, NoneOfTheImpossibleValueRulesFires) {
  if (!testing::have_shared()) GTEST_SKIP() << "no " << testing::shared_dir();
  std::vector<std::string> files;
  for (const std::string top : {"conformance", "traces/h200"})
    for (const auto& e : std::filesystem::recursive_directory_iterator(testing::shared_dir() + "/" + top))
      if (e.path().string().ends_with(".json.gz")) files.push_back(e.path().string());
  ASSERT_GE(files.size(), 20u);
  for (const std::string& f : files) {
    EventStore s;
    ReadOutcome out = testing::read(f, s);
    ASSERT_TRUE(out.ok) << out.error;
    for (ImportCounter c : {ImportCounter::kTimeOutOfRange, ImportCounter::kNegativeSize,
                            ImportCounter::kAmbiguousCorrelation, ImportCounter::kUnmatchedBeginEnd,
                            ImportCounter::kNumberOutOfRange})
      EXPECT_EQ(s.stats.count(c), 0u) << f << ": " << counter_info(c).name;
  }
}

}  // namespace
}  // namespace stepscope::trace
