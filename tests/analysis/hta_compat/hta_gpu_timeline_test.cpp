#include "analysis/hta_compat/hta_gpu_timeline.h"

#include <gtest/gtest.h>

#include "trace/trace_fixtures.h"

namespace stepscope::analysis::hta {
namespace {

using testing::trace_doc;
using testing::x_event;

TEST(hta_gpu_timeline, YieldsHtaRoundedFilteredActivities) {
  testing::TempDir dir;
  trace::EventStore store;
  auto outcome = testing::read(dir.write("rank-0.json", trace_doc({
      x_event("user_annotation", "ProfilerStep#1", "1000.5", "100"),
      x_event("cuda_runtime", "cudaLaunchKernel", "1010.25", "5", "1", "1", R"("args": {"correlation": 11})"),
      x_event("kernel", "gemm", "1020.4", "0.5", "0", "7", R"("args": {"stream": 7, "correlation": 11})"),
      x_event("kernel", "relu", "1100.5", "2.25", "0", "7", R"("args": {"stream": 7, "correlation": 11})"),
      x_event("user_annotation", "ProfilerStep#2", "1200.75", "100"),
      x_event("cuda_runtime", "cudaLaunchKernel", "1210", "5", "1", "1", R"("args": {"correlation": 12})"),
      x_event("kernel", "late", "1220", "3", "0", "7", R"("args": {"stream": 7, "correlation": 12})"),
  })), store);
  ASSERT_TRUE(outcome.ok) << outcome.error;

  AnalysisOptions options;
  options.timeline_builder = build_hta_gpu_timeline;
  const GpuTimeline t = build_gpu_timeline(store, options);
  // gemm rounds to a negative duration; "late" was launched in the last step.
  EXPECT_EQ(t.dropped_negative, 1);
  ASSERT_EQ(t.activities.size(), 1u);
  const GpuActivity& relu = t.activities[0];
  EXPECT_EQ(store.name_of(relu.row), "relu");
  EXPECT_EQ(relu.start_ns, 1'101'000);  // ceil(1100.5) µs
  EXPECT_EQ(relu.end_ns, 1'102'000);    // floor(1100.5 + 2.25) µs
  EXPECT_EQ(relu.cls, KernelClass::kComputation);
  ASSERT_TRUE(relu.has_launch());
  EXPECT_EQ(store.name_of(relu.launch_row), "cudaLaunchKernel");
  EXPECT_EQ(relu.launch_start_ns, 1'011'000);
  EXPECT_EQ(relu.launch_end_ns, 1'015'000);
  ASSERT_EQ(t.lanes.size(), 1u);
  EXPECT_EQ(t.lanes[0].stream, 7);
}

}  // namespace
}  // namespace stepscope::analysis::hta
