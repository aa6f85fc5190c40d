// The launch -> GPU activity join by correlation id. CUPTI gives each runtime
// call its own id, and one call can start several GPU activities (a graph
// launch starts all its kernels). Runtime calls that share an id make the
// join ambiguous: they are joined to nothing and counted, instead of every
// GPU activity of the id going to the first call (which put every kernel of
// a trace with repeated ids in step 1).
#include <gtest/gtest.h>

#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

using testing::trace_doc;
using testing::x_event;

std::string launch(const std::string& ts, int corr) {
  return x_event("cuda_runtime", "cudaLaunchKernel", ts, "2", "1", "1",
                 R"("args": {"correlation": )" + std::to_string(corr) + "}");
}
std::string kernel(const std::string& name, const std::string& ts, int corr) {
  return x_event("kernel", name, ts, "3", "0", "7",
                 R"("args": {"stream": 7, "device": 0, "correlation": )" + std::to_string(corr) + "}");
}

void load(const std::vector<std::string>& events, EventStore& store) {
  const std::string text = trace_doc(events);
  const TokenizeResult r = read_trace_bytes(text, store, TokenizerOptions{});
  ASSERT_EQ(r.status, TokenizeStatus::kOk) << r.message;
}

TEST(CorrelationJoin, RuntimeCallsSharingAnIdAreNotJoinedAndAreCounted) {
  EventStore s;
  load({launch("10", 1), kernel("k_a", "11", 1), launch("100", 1), kernel("k_b", "101", 1), launch("200", 1),
        kernel("k_c", "201", 1), launch("300", 2), kernel("k_d", "301", 2)},
       s);
  ASSERT_EQ(s.gpu_rows.size(), 4u);
  // k_a..k_c: three launches claim id 1, none is chosen.
  for (size_t g = 0; g < 3; ++g) EXPECT_EQ(s.launch_of_gpu[g], EventStore::kNoRow) << s.name_of(s.gpu_rows[g]);
  // k_d's id is unique: joined to its launch at 300 us.
  ASSERT_NE(s.launch_of_gpu[3], EventStore::kNoRow);
  EXPECT_EQ(s.events.ts_ns[s.launch_of_gpu[3]], 300000);
  EXPECT_EQ(s.stats.count(ImportCounter::kAmbiguousCorrelation), 2u);  // the calls after the first
  ASSERT_FALSE(s.stats.log().empty());
  EXPECT_EQ(s.stats.log().front().message,
            "correlation id 1 is shared by several runtime calls (no byte offset: found after reading)");
  EXPECT_EQ(s.stats.skipped_records(), 0u);  // the events stay; only the join is withheld
  EXPECT_NE(import_warning(s.stats).find("2 runtime calls sharing a correlation id"), std::string::npos)
      << import_warning(s.stats);
}

// One launch, several activities (cudaGraphLaunch): unambiguous, all joined.
TEST(CorrelationJoin, SeveralActivitiesOfOneLaunchAreJoined) {
  EventStore s;
  load({x_event("cuda_runtime", "cudaGraphLaunch", "10", "2", "1", "1", R"("args": {"correlation": 5})"),
        kernel("g1", "12", 5), kernel("g2", "16", 5), kernel("g3", "20", 5)},
       s);
  ASSERT_EQ(s.gpu_rows.size(), 3u);
  for (size_t g = 0; g < 3; ++g) {
    ASSERT_NE(s.launch_of_gpu[g], EventStore::kNoRow);
    EXPECT_EQ(s.name_of(s.launch_of_gpu[g]), "cudaGraphLaunch");
  }
  EXPECT_EQ(s.stats.count(ImportCounter::kAmbiguousCorrelation), 0u);
}

}  // namespace
}  // namespace stepscope::trace
