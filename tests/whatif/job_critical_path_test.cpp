// The critical path across ranks (whatif/job_critical_path.h): on a
// hand-made two-rank step where rank 1 reaches the all-reduce 40 us late the
// path walks back from rank 0's step end through the all-reduce to rank 1's
// compute; on the real 8-rank gloo run with a straggler it crosses to the
// slowed rank; on every real multi-rank set its segments tile each window.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "test_paths.h"
#include "whatif/built_job.h"
#include "whatif/job_critical_path.h"

namespace stepscope::whatif {
namespace {

using testing_support::build_job;
using testing_support::diagnose_ranks;
using testing_support::two_step_rank;
using C = PathCategory;

std::vector<JobStepPath> paths_of(const JobGraph& g) {
  const JobReplayInput in = job_recorded_input(g);
  return job_critical_paths(g, in, replay_job(g, in));
}

// The crossing's `to` is the rank the instance's last arrival names.
uint32_t last_rank_index(const JobGraph& g, const RankCrossing& c) {
  const JobReplayResult r = replay_job(g, job_recorded_input(g));
  return static_cast<uint32_t>(last_arrival(g, r, c.instance).rank_index);
}

int64_t cat(const JobStepPath& p, C c) { return p.by_category_ns[static_cast<size_t>(c)]; }

// (rank index, start, end, category) of each run.
struct PathRun {
  uint32_t rank;
  int64_t start, end;
  C cat;
  bool operator==(const PathRun&) const = default;
};
void PrintTo(const PathRun& r, std::ostream* os) {
  *os << "rank " << r.rank << " [" << r.start << ", " << r.end << ") " << to_string(r.cat);
}
std::vector<PathRun> runs(const JobStepPath& p) {
  std::vector<PathRun> out;
  for (const JobPathRun& r : p.runs) out.push_back({r.rank_index, r.start_ns - p.start_ns, r.end_ns - p.start_ns, r.category});
  return out;
}

// The segments tile the window: no gap, no overlap, and the per-category
// and per-rank sums are the wall.
void expect_tiles(const JobStepPath& p) {
  SCOPED_TRACE("step " + std::to_string(p.step));
  ASSERT_FALSE(p.segments.empty());
  EXPECT_EQ(p.segments.front().start_ns, p.start_ns);
  EXPECT_EQ(p.segments.back().end_ns, p.end_ns);
  for (size_t s = 0; s < p.segments.size(); ++s) {
    EXPECT_GT(p.segments[s].dur_ns(), 0);
    if (s > 0) {
      EXPECT_EQ(p.segments[s].start_ns, p.segments[s - 1].end_ns);
    }
  }
  int64_t by_cat = 0, by_rank = 0;
  for (int64_t v : p.by_category_ns) by_cat += v;
  for (int64_t v : p.by_rank_ns) by_rank += v;
  EXPECT_EQ(by_cat, p.wall_ns());
  EXPECT_EQ(by_rank, p.wall_ns());
}

TEST(JobCriticalPath, ALateRankAtAnAllReduceIsWhereThePathCrosses) {
  // Rank 0 computes 100 us, rank 1 140 us; the all-reduce ends at 155 us on
  // both (10 us of transfer after rank 1 arrives at 145 us), each rank's sync
  // returns 5 us later, step 2 starts at 170 us. Both step-1 windows end at
  // 170 us: the path starts on rank 0 (the first rank).
  auto j = build_job(diagnose_ranks({two_step_rank(100'000, 155'000), two_step_rank(140'000, 155'000)}));
  ASSERT_TRUE(j->graph.usable());
  const std::vector<JobStepPath> p = paths_of(j->graph);
  ASSERT_EQ(p.size(), 2u);
  for (const JobStepPath& s : p) expect_tiles(s);
  const JobStepPath& s1 = p[0];
  EXPECT_EQ(s1.step, 1);
  EXPECT_EQ(s1.end_index, 0u);
  EXPECT_EQ(s1.wall_ns(), 170'000);
  // Walking back from rank 0's step end: its CPU time after the sync, the
  // sync's release, the all-reduce's transfer; there it crosses to rank 1,
  // whose compute (launched 4 us after the step start) held everyone back.
  const std::vector<PathRun> want = {{1, 0, 1'000, C::kHostOther},       {1, 1'000, 5'000, C::kLaunch},
                                 {1, 5'000, 145'000, C::kGpuCompute}, {0, 145'000, 155'000, C::kGpuCommunication},
                                 {0, 155'000, 160'000, C::kSync},     {0, 160'000, 170'000, C::kHostOther}};
  EXPECT_EQ(runs(s1), want);
  EXPECT_EQ(s1.by_rank_ns[1], 145'000);
  EXPECT_EQ(s1.by_rank_ns[0], 25'000);
  EXPECT_EQ(cat(s1, C::kGpuCompute), 140'000);
  ASSERT_EQ(s1.crossings.size(), 1u);
  const RankCrossing& c = s1.crossings[0];
  EXPECT_EQ(j->graph.collectives[c.instance].op, "allreduce");
  EXPECT_EQ(c.from_index, 0u);
  EXPECT_EQ(c.to_index, 1u);
  EXPECT_EQ(c.at_ns - s1.start_ns, 145'000);
  EXPECT_EQ(c.wait_ns, 40'000);
  EXPECT_EQ(c.max_wait_ns, 40'000);
  // Step 2 has no collective: it stays on rank 0.
  EXPECT_EQ(p[1].step, 2);
  EXPECT_TRUE(p[1].crossings.empty());
  EXPECT_EQ(p[1].by_rank_ns[0], p[1].wall_ns());

  // The summary: rank ids, totals, and the diagnosis carries it.
  const JobCriticalPath sum = summarize_job_critical_path(j->graph);
  ASSERT_EQ(sum.steps.size(), 2u);
  EXPECT_EQ(sum.ranks, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(sum.crossings, 1);
  EXPECT_EQ(sum.crossed_to, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(sum.wall_ns, 270'000);
  EXPECT_EQ(sum.total_by_rank_ns[1], 145'000);
  ASSERT_EQ(sum.steps[0].crossings.size(), 1u);
  EXPECT_EQ(sum.steps[0].crossings[0].op, "allreduce");
  EXPECT_EQ(sum.steps[0].crossings[0].to_rank, 1);
  EXPECT_EQ(sum.steps[0].crossings[0].at_ns, 145'000);  // rank 1's trace clock
  ASSERT_FALSE(sum.steps[0].top.empty());
  EXPECT_EQ(sum.steps[0].top[0].rank, 1);
  EXPECT_EQ(sum.steps[0].top[0].category, C::kGpuCompute);
  EXPECT_EQ(sum.steps[0].top[0].dur_ns, 140'000);
  EXPECT_EQ(j->run->d.job_critical_path.crossings, 1);
  EXPECT_EQ(j->run->d.job_critical_path.wall_ns, 270'000);
}

TEST(JobCriticalPath, NoJobGraphNoPath) {
  auto j = build_job(diagnose_ranks({two_step_rank(100'000, 155'000),
                                     {analysis::testing_support::host_span("cpu_op", "aten::add", 1'000, 2'000)}}));
  ASSERT_FALSE(j->graph.usable());
  const JobCriticalPath s = summarize_job_critical_path(j->graph);
  EXPECT_TRUE(s.ranks.empty());
  EXPECT_TRUE(s.steps.empty());
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("no job critical path"), std::string::npos) << s.notes[0];
}

// Real 8-rank DDP over gloo (tests/data/dist_gloo_cpu/straggler, meta.json):
// rank 7 sleeps 40 ms before every forward and arrives last at most
// all-reduces. The job's path spends most of its time on rank 7 and crosses
// to it from the rank whose step ends last.
TEST(JobCriticalPath, TheRealStragglerIsWhereThePathGoes) {
  auto j = build_job(diagnose::testing_support::diagnose_folder(stepscope::testing::test_data_dir() +
                                                                "/dist_gloo_cpu/straggler"));
  ASSERT_TRUE(j->graph.usable());
  const std::vector<JobStepPath> p = paths_of(j->graph);
  ASSERT_EQ(p.size(), 3u);
  const uint32_t slow = 7;
  ASSERT_EQ(j->graph.ranks[slow].rank, 7);
  int64_t wall = 0, on_slow = 0;
  int crossed_to_slow = 0;
  for (const JobStepPath& s : p) {
    expect_tiles(s);
    wall += s.wall_ns();
    on_slow += s.by_rank_ns[slow];
    for (const RankCrossing& c : s.crossings) {
      EXPECT_EQ(last_rank_index(j->graph, c), c.to_index);
      EXPECT_NE(c.from_index, c.to_index);
      if (c.to_index != slow) continue;
      ++crossed_to_slow;
      EXPECT_GT(c.wait_ns, 20'000'000);  // measured 43.4 ms: about the 40 ms sleep
      EXPECT_GE(c.max_wait_ns, c.wait_ns);
    }
  }
  EXPECT_GE(crossed_to_slow, 1);
  // Measured 64% (160 of 249 ms): the steps wait for rank 7's sleep.
  EXPECT_GT(on_slow, wall / 2);
  const JobCriticalPath sum = j->run->d.job_critical_path;
  EXPECT_EQ(sum.wall_ns, wall);
  EXPECT_EQ(sum.total_by_rank_ns[slow], on_slow);
  EXPECT_GE(sum.crossed_to[slow], 1);
  const auto most = std::max_element(sum.total_by_rank_ns.begin(), sum.total_by_rank_ns.end());
  EXPECT_EQ(most - sum.total_by_rank_ns.begin(), static_cast<std::ptrdiff_t>(slow));
}

// Every real multi-rank set: each step's path tiles its window, and the
// window is the job replay's window of the rank that ends last.
void expect_job_tiled(const std::string& folder) {
  SCOPED_TRACE(folder);
  auto j = build_job(diagnose::testing_support::diagnose_folder(folder));
  ASSERT_TRUE(j->graph.usable());
  const JobReplayInput in = job_recorded_input(j->graph);
  const JobReplayResult r = replay_job(j->graph, in);
  const std::vector<JobStepPath> p = job_critical_paths(j->graph, in, r);
  ASSERT_FALSE(p.empty());
  for (const JobStepPath& s : p) {
    expect_tiles(s);
    for (size_t i = 0; i < r.windows.size(); ++i)
      for (const StepWindow& w : r.windows[i])
        if (w.step == s.step) EXPECT_LE(w.end_ns, s.end_ns) << "rank index " << i << " step " << s.step;
    for (const RankCrossing& c : s.crossings) EXPECT_EQ(last_rank_index(j->graph, c), c.to_index);
    if (j->graph.collectives.empty()) EXPECT_TRUE(s.crossings.empty());
  }
  EXPECT_EQ(j->run->d.job_critical_path.steps.size(), p.size());
}

TEST(JobCriticalPathTiling, GlooCpuTraces) {
  for (const char* s : {"healthy", "straggler"}) expect_job_tiled(stepscope::testing::test_data_dir() + "/dist_gloo_cpu/" + s);
}

TEST(JobCriticalPathTiling, SharedMultiRankTraces) {
  const std::string shared = stepscope::testing::shared_dir();
  if (!std::filesystem::is_directory(shared + "/conformance")) GTEST_SKIP() << "no ../shared";
  expect_job_tiled(shared + "/conformance/param/dlrm_8rank");
  expect_job_tiled(shared + "/conformance/hta/trace_filter");  // untied: no crossing
}

}  // namespace
}  // namespace stepscope::whatif
