// Windows of one process read as one rank (trace/process_windows.h): the
// time between them was not recorded, so the rank's GPU span and each
// stream's idle time leave it out, while per-step figures stay per step.
#include <gtest/gtest.h>

#include "analysis/rank_analysis.h"
#include "analysis_fixtures.h"
#include "trace/trace_set.h"

namespace stepscope::analysis {
namespace {

using stepscope::testing::x_event;

// One window at `t0` µs: ProfilerStep#`step` 0-100 µs, a launch at 15 µs of
// a 50 µs kernel at 30 µs (stream 7).
std::string window(int64_t t0, int step) {
  auto at = [&](int64_t us) { return std::to_string(t0 + us); };
  return stepscope::testing::trace_doc({
      R"({"name": "process_name", "ph": "M", "ts": 0, "pid": 42, "tid": 0, "args": {"name": "python"}})",
      x_event("user_annotation", "ProfilerStep#" + std::to_string(step), at(0), "100", "42", "42"),
      x_event("cuda_runtime", "cudaLaunchKernel", at(15), "5", "42", "42", R"("args": {"correlation": 1})"),
      x_event("kernel", "sm90_xmma_gemm_bf16", at(30), "50", "0", "7",
              R"("args": {"device": 0, "stream": 7, "correlation": 1})"),
  });
}

TEST(ProcessWindowsAnalysis, TimeBetweenWindowsIsNeitherSpanNorIdle) {
  stepscope::testing::TempDir dir;
  dir.write("a.json", window(1000000, 5));
  dir.write("b.json", window(2000000, 6));
  trace::LoadResult lr = trace::load_traces({dir.path().string()}, trace::ReadOptions{});
  ASSERT_TRUE(lr.ok) << lr.error;
  ASSERT_EQ(lr.set.ranks.size(), 1u);
  RankAnalysis a = analyze_rank(*lr.set.ranks[0], AnalysisOptions{});
  // GPU span: 30-80 µs of the first window, then its 20 µs host tail, then
  // 0-80 µs of the second: 150 µs, of which the kernels are busy 100 µs.
  const TemporalBreakdown& t = a.temporal.rank;
  EXPECT_EQ(t.kernel_time_ns, 150000);
  EXPECT_EQ(t.busy_time_ns, 100000);
  EXPECT_EQ(t.idle_time_ns, 50000);
  EXPECT_NEAR(t.idle_pct, 100.0 / 3, 1e-9);
  // Stream 7: the gap between the kernels less the unrecorded time is the
  // 50 µs the second kernel waited for its launch.
  ASSERT_EQ(a.idle.streams.size(), 1u);
  const StreamIdle& s = a.idle.streams[0];
  EXPECT_EQ(s.span_ns, 150000);
  EXPECT_EQ(s.idle_ns, 50000);
  EXPECT_EQ(s.host_wait_ns, 50000);
  EXPECT_EQ(s.span_ns - s.busy_ns, s.idle_ns);
  // The steps are the two windows' steps.
  ASSERT_EQ(a.steps.steps.size(), 2u);
  EXPECT_EQ(a.steps.steps[1].step, 6);
  EXPECT_EQ(a.steps.steps[1].gpu_duration_ns, 50000);
}

}  // namespace
}  // namespace stepscope::analysis
