// run_hta_compat where HTA fails: stepscope's answers instead of HTA's
// exceptions (docs/hta_compat.md §9), on small inline traces.
#include "analysis/hta_compat/run_hta_compat.h"

#include <gtest/gtest.h>

#include "analysis/hta_compat/temporal_breakdown.h"
#include "trace/trace_fixtures.h"

namespace stepscope::analysis::hta {
namespace {

using testing::TempDir;
using testing::trace_doc;
using testing::x_event;

trace::EventStore read_doc(const TempDir& dir, const std::string& doc) {
  trace::EventStore store;
  auto outcome = testing::read(dir.write("rank-0.json", doc), store);
  EXPECT_TRUE(outcome.ok) << outcome.error;
  return store;
}

TEST(hta_compat_run, NegativeDurationsFailHtaAndAreClamped) {
  // The memset (300.2 + 0.3) rounds to [301, 300]: alone it is a merged
  // group of length -1, so HTA's non-compute time is -1 and its assertion fails.
  TempDir dir;
  const trace::EventStore store = read_doc(dir, trace_doc({
      x_event("kernel", "gemm", "200.0", "10", "0", "7", R"("args": {"stream": 7, "correlation": 1})"),
      x_event("gpu_memset", "Memset (Device)", "300.2", "0.3", "0", "7", R"("args": {"stream": 7, "correlation": 2})"),
  }));
  const HtaRankResult r = run_hta_compat(store);
  EXPECT_EQ(r.hta_errors.temporal_breakdown, kHtaAssertionError);
  EXPECT_EQ(r.negative_durations, 1);
  const HtaTemporalRow& t = r.temporal_breakdown;
  EXPECT_EQ(t.clamped_negative_durations, 1);
  EXPECT_EQ(t.kernel_time_us, 101);  // [0, 10] and the clamped [101, 101]
  EXPECT_EQ(t.compute_time_us, 10);
  EXPECT_EQ(t.idle_time_us, 91);
  EXPECT_EQ(t.non_compute_time_us, 0);
  EXPECT_EQ(t.idle_time_pctg, 90.1);
  // Tables HTA does answer keep the negative duration, as HTA does.
  ASSERT_EQ(r.kernel_breakdown_top.size(), 2u);
  EXPECT_EQ(r.kernel_breakdown_top[1].name, "Memset (Device)");
  EXPECT_EQ(r.kernel_breakdown_top[1].sum_us, -1);
}

TEST(hta_compat_run, QueueLengthCountsCuLaunchKernelExFromRelease061On) {
  // Two launches on stream 7: one by cudaLaunchKernel, one by the driver call
  // cuBLASLt's GEMMs use. 0.6.1 queues both; 0.5.0 only the first.
  TempDir dir;
  const trace::EventStore store = read_doc(dir, trace_doc({
      x_event("cuda_runtime", "cudaLaunchKernel", "100", "2", "1", "1", R"("args": {"correlation": 1})"),
      x_event("cuda_driver", "cuLaunchKernelEx", "103", "2", "1", "1", R"("args": {"correlation": 2})"),
      x_event("kernel", "elementwise", "110", "5", "0", "7", R"("args": {"stream": 7, "correlation": 1})"),
      x_event("kernel", "nvjet_gemm", "120", "5", "0", "7", R"("args": {"stream": 7, "correlation": 2})"),
  }));
  const HtaRankResult now = run_hta_compat(store);
  const HtaRankResult pypi = run_hta_compat(store, HtaRelease::k0_5_0);
  ASSERT_EQ(now.queue_length_summary.size(), 1u);
  ASSERT_EQ(pypi.queue_length_summary.size(), 1u);
  // 0.6.1: +1 +1 -1 -1 -> queue lengths 1, 2, 1, 0.
  EXPECT_EQ(now.queue_length_summary[0].queue_length.count, 4);
  EXPECT_EQ(now.queue_length_summary[0].queue_length.max, 2);
  // 0.5.0: +1 -1 -> 1, 0.
  EXPECT_EQ(pypi.queue_length_summary[0].queue_length.count, 2);
  EXPECT_EQ(pypi.queue_length_summary[0].queue_length.max, 1);
  // Everything else is the same.
  EXPECT_EQ(now.temporal_breakdown.kernel_time_us, pypi.temporal_breakdown.kernel_time_us);
  EXPECT_EQ(now.launch_stats.cpu_duration.count, pypi.launch_stats.cpu_duration.count);
}

TEST(hta_compat_run, NoGpuActivityGivesEmptyTables) {
  TempDir dir;
  const trace::EventStore store = read_doc(dir, trace_doc({
      x_event("cpu_op", "aten::add", "100", "10"),
      x_event("cuda_runtime", "cudaLaunchKernel", "105", "2", "1", "1", R"("args": {"correlation": 4})"),
  }, R"("distributedInfo": {"rank": 3})"));
  const HtaRankResult r = run_hta_compat(store);
  EXPECT_EQ(r.rank, 3);
  EXPECT_TRUE(r.no_gpu_events);
  EXPECT_TRUE(r.no_memory_kernels);
  EXPECT_TRUE(r.temporal_breakdown.no_gpu_events);
  EXPECT_EQ(r.temporal_breakdown.kernel_time_us, 0);
  EXPECT_EQ(r.hta_errors.temporal_breakdown, kHtaNoKernelsError);
  EXPECT_FALSE(r.hta_errors.idle_time_breakdown.empty());
  EXPECT_FALSE(r.hta_errors.queue_length_summary.empty());
  EXPECT_FALSE(r.hta_errors.memory_bw_summary.empty());
  EXPECT_TRUE(r.idle_time_breakdown.empty());
  EXPECT_TRUE(r.queue_length_summary.empty());
  EXPECT_TRUE(r.memory_bw_summary.empty());
  EXPECT_TRUE(r.kernel_type_breakdown.empty());
  EXPECT_FALSE(r.comm_comp_overlap.comp_comm_overlap_pctg.has_value());
  EXPECT_EQ(r.launch_stats.cpu_duration.count, 0);
  EXPECT_FALSE(r.launch_stats.cpu_duration.mean.has_value());
}

TEST(hta_compat_run, OverlapLabelsAndLaunchStats) {
  TempDir dir;
  const trace::EventStore store = read_doc(dir, trace_doc({
      x_event("cuda_runtime", "cudaLaunchKernel", "90", "4", "1", "1", R"("args": {"correlation": 1})"),
      x_event("cuda_runtime", "cudaLaunchKernel", "95", "2", "1", "1", R"("args": {"correlation": 2})"),
      x_event("kernel", "gemm", "100", "50", "0", "7", R"("args": {"stream": 7, "correlation": 1})"),
      x_event("kernel", "ncclKernel_AllReduce", "120", "60", "0", "20", R"("args": {"stream": 20, "correlation": 2})"),
  }));
  const HtaRankResult r = run_hta_compat(store);
  // gemm alone 100-120, both 120-150, NCCL alone 150-180.
  ASSERT_EQ(r.kernel_type_breakdown.size(), 3u);
  EXPECT_EQ(r.kernel_type_breakdown[0].kernel_type, "COMPUTATION overlapping COMMUNICATION");
  EXPECT_EQ(r.kernel_type_breakdown[0].sum_us, 30);
  EXPECT_EQ(r.kernel_type_breakdown[0].percentage, 37.5);
  EXPECT_EQ(r.comm_comp_overlap.comp_comm_overlap_pctg, 50.0);
  // Launch delays: 100 - 94 = 6 and 120 - 97 = 23.
  EXPECT_EQ(r.launch_stats.launch_delay.count, 2);
  EXPECT_EQ(r.launch_stats.launch_delay.min, 6);
  EXPECT_EQ(r.launch_stats.launch_delay.max, 23);
  EXPECT_EQ(r.launch_stats.cpu_duration.mean, 3);
  // Each stream: one launch then one kernel start.
  ASSERT_EQ(r.queue_length_summary.size(), 2u);
  EXPECT_EQ(r.queue_length_summary[0].stream, 7);
  EXPECT_EQ(r.queue_length_summary[0].queue_length.max, 1);
  EXPECT_EQ(r.queue_length_summary[0].queue_length.min, 0);
  // Idle: one kernel per stream, so only the "other" row with no gap.
  ASSERT_EQ(r.idle_time_breakdown.size(), 2u);
  EXPECT_EQ(r.idle_time_breakdown[0].idle_category, "other");
  EXPECT_FALSE(r.idle_time_breakdown[0].idle_time_ratio.has_value());
}

}  // namespace
}  // namespace stepscope::analysis::hta
