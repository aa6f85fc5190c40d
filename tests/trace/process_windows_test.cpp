// Files written by one process (a profiler that exported several windows)
// are one rank; files of different ranks stay apart even when their pids
// agree (containers give every rank pid 1).
#include <gtest/gtest.h>

#include "trace/process_windows.h"
#include "trace/trace_set.h"
#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

using testing::TempDir;
using testing::trace_doc;
using testing::x_event;

// One profiling window of process `pid` ("python"), starting at `t0` µs:
// ProfilerStep#`step` with one op launching one kernel. Kineto restarts
// External ids in each window, and so do these (op 1, launch 1, kernel 1).
std::string window(int pid, int64_t t0, int step, const std::string& header = "") {
  auto at = [&](int64_t us) { return std::to_string(t0 + us); };
  const std::string p = std::to_string(pid);
  return trace_doc(
      {
          R"({"name": "process_name", "ph": "M", "ts": )" + at(0) + R"(, "pid": )" + p +
              R"(, "tid": 0, "args": {"name": "python"}})",
          x_event("user_annotation", "ProfilerStep#" + std::to_string(step), at(0), "100", p, p),
          x_event("cpu_op", "aten::mm", at(10), "20", p, p, R"("args": {"External id": 1})"),
          x_event("cuda_runtime", "cudaLaunchKernel", at(15), "5", p, p,
                  R"("args": {"correlation": 1, "External id": 1})"),
          x_event("kernel", "sm90_xmma_gemm_bf16", at(30), "50", "0", "7",
                  R"("args": {"device": 0, "stream": 7, "correlation": 1, "External id": 1})"),
      },
      header);
}

std::string rank_info(int rank) {
  return R"("distributedInfo": {"backend": "nccl", "rank": )" + std::to_string(rank) + R"(, "world_size": 2})";
}

TEST(ProcessWindows, TwoWindowsOfOneProcessAreOneRank) {
  TempDir dir;
  const std::string a = dir.write("host_4242.1000.pt.trace.json", window(4242, 1000000, 5));
  const std::string b = dir.write("host_4242.2000.pt.trace.json", window(4242, 2000000, 16));
  LoadResult r = load_traces({dir.path().string()}, ReadOptions{});
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.set.ranks.size(), 1u);
  EXPECT_EQ(r.set.notes, (std::vector<std::string>{a + " and " + b + " are one process (pid 4242): read as one rank"}));
  const EventStore& s = *r.set.ranks[0];
  EXPECT_EQ(s.source_path, a);
  ASSERT_EQ(s.step_rows.size(), 2u);
  EXPECT_EQ(s.name_of(s.step_rows[0]), "ProfilerStep#5");
  EXPECT_EQ(s.name_of(s.step_rows[1]), "ProfilerStep#16");
  EXPECT_EQ(s.events.ts_ns[s.step_rows[1]], 2000000000);
  // From the first window's last end to the second's first start nothing was recorded.
  EXPECT_EQ(s.meta.unrecorded, (std::vector<std::pair<int64_t, int64_t>>{{1000100000, 2000000000}}));
  // Each kernel joins its own window's launch and op, although both windows
  // used correlation 1 and External id 1.
  EXPECT_EQ(s.stats.count(ImportCounter::kAmbiguousCorrelation), 0u);
  ASSERT_EQ(s.gpu_rows.size(), 2u);
  for (size_t g = 0; g < 2; ++g) {
    const uint32_t launch = s.launch_of_gpu[g], op = s.cpu_op_of_gpu[g];
    ASSERT_NE(launch, EventStore::kNoRow) << g;
    ASSERT_NE(op, EventStore::kNoRow) << g;
    EXPECT_EQ(s.events.ts_ns[launch], s.events.ts_ns[s.gpu_rows[g]] - 15000) << g;
    EXPECT_EQ(s.events.ts_ns[op], s.events.ts_ns[s.gpu_rows[g]] - 20000) << g;
  }
  // The same with distributedInfo: one rank, that rank.
  TempDir ranked;
  ranked.write("w.1.json", window(1, 1000000, 0, rank_info(1)));
  ranked.write("w.2.json", window(1, 2000000, 8, rank_info(1)));
  LoadResult r2 = load_traces({ranked.path().string()}, ReadOptions{});
  ASSERT_TRUE(r2.ok) << r2.error;
  ASSERT_EQ(r2.set.ranks.size(), 1u);
  EXPECT_EQ(r2.set.ranks[0]->rank, 1);
  EXPECT_TRUE(r2.set.warnings.empty());
}

TEST(ProcessWindows, RanksSharingAPidStayApart) {
  // Containers: pid 1 on every host, and two different distributedInfo ranks
  // (here even in separate time windows).
  TempDir dir;
  dir.write("rank0.json", window(1, 1000000, 5, rank_info(0)));
  dir.write("rank1.json", window(1, 2000000, 5, rank_info(1)));
  LoadResult r = load_traces({dir.path().string()}, ReadOptions{});
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.set.ranks.size(), 2u);
  EXPECT_EQ(r.set.ranks[0]->rank, 0);
  EXPECT_EQ(r.set.ranks[1]->rank, 1);
  EXPECT_TRUE(r.set.notes.empty());
  // No distributedInfo, same pid and name, but recorded at the same time:
  // concurrent processes (on different hosts), not windows of one.
  TempDir same_time;
  same_time.write("a.json", window(1, 1000000, 5));
  same_time.write("b.json", window(1, 1000050, 5));
  LoadResult r2 = load_traces({same_time.path().string()}, ReadOptions{});
  ASSERT_TRUE(r2.ok) << r2.error;
  EXPECT_EQ(r2.set.ranks.size(), 2u);
  EXPECT_TRUE(r2.set.notes.empty());
  // Different pids: different processes.
  TempDir other_pid;
  other_pid.write("a.json", window(100, 1000000, 5));
  other_pid.write("b.json", window(200, 2000000, 6));
  LoadResult r3 = load_traces({other_pid.path().string()}, ReadOptions{});
  ASSERT_TRUE(r3.ok) << r3.error;
  EXPECT_EQ(r3.set.ranks.size(), 2u);
}

TEST(ProcessWindows, WindowsWithoutStepsStayApart) {
  // Without ProfilerStep markers each file is one window over its GPU span;
  // merged, that window would run across the unrecorded time between them.
  auto no_steps = [](int64_t t0) {
    return trace_doc({R"({"name": "process_name", "ph": "M", "ts": 0, "pid": 9, "tid": 0, "args": {"name": "python"}})",
                      x_event("cpu_op", "aten::mm", std::to_string(t0), "20", "9", "9")});
  };
  TempDir dir;
  dir.write("a.json", no_steps(1000));
  dir.write("b.json", no_steps(900000));
  LoadResult r = load_traces({dir.path().string()}, ReadOptions{});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.set.ranks.size(), 2u);
  EXPECT_TRUE(r.set.notes.empty());
}

TEST(ProcessWindows, IdentityNeedsAProcessName) {
  EventStore s;
  TempDir dir;
  ASSERT_TRUE(testing::read(dir.write("x.json", trace_doc(testing::cpu_ops(3))), s).ok);
  std::optional<ProcessIdentity> id = process_identity(s);
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->pid, 1);
  EXPECT_EQ(id->process_name, "");
  ProcessIdentity later = *id;
  later.first_ns = id->last_ns + 1;
  EXPECT_FALSE(same_process_later_window(*id, later));  // no name: unknown process, never merged
  id->process_name = later.process_name = "python";
  EXPECT_TRUE(same_process_later_window(*id, later));
  later.rank = 3;
  EXPECT_FALSE(same_process_later_window(*id, later));
}

}  // namespace
}  // namespace stepscope::trace
