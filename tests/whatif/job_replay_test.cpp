// The job replay (whatif/job_graph.h, job_replay.h): ranks tied at their
// collectives. Exact answers on hand-made two-rank steps (a straggler fixed
// shortens the other rank's step, a rank delayed delays the other, the join
// names the rank that made the others wait), bad input (calls not on every
// rank, a rank with no graph, a cycle from collectives issued in different
// orders), and the real multi-rank traces: the recorded durations reproduce
// every rank's step windows, and what-ifs move the other ranks.
#include <gtest/gtest.h>

#include <filesystem>

#include "analysis/gpu_timeline.h"
#include "diagnose/diagnose_fixtures.h"
#include "diagnose/replay_graph.h"
#include "whatif/built_job.h"
#include "whatif/job_replay.h"

namespace stepscope::whatif {
namespace {

using analysis::testing_support::kernel;
using analysis::testing_support::launch;
using analysis::testing_support::step;
using testing_support::build_job;
using testing_support::diagnose_ranks;
using testing_support::Job;
using testing_support::kAllGather;
using testing_support::kAllReduce;
using testing_support::kCompute;
using testing_support::two_step_rank;

// Rank 0 computes 100 us, rank 1 140 us: rank 0's all-reduce waits 40 us.
std::unique_ptr<Job> straggler_job() { return build_job(diagnose_ranks({two_step_rank(100'000, 155'000), two_step_rank(140'000, 155'000)})); }

// The compute kernel: the rank's first GPU work.
uint32_t compute_node(const Job& j, size_t rank) { return j.graph.node(rank, j.graphs[rank].gpu_node(0)); }

TEST(JobReplay, RecordedDurationsReproduceEveryRank) {
  auto j = straggler_job();
  ASSERT_TRUE(j->graph.usable()) << (j->graph.notes.empty() ? "" : j->graph.notes[0]);
  ASSERT_EQ(j->graph.collectives.size(), 1u);
  EXPECT_EQ(j->graph.collectives[0].op, "allreduce");
  EXPECT_EQ(j->graph.collectives[0].transfer_ns, 15'000 - 5'000);  // rank 1's: it waited for nobody
  EXPECT_EQ(j->graph.collective_edges, 4);
  const JobReplayResult r = replay_job(j->graph, job_recorded_input(j->graph));
  for (size_t v = 0; v < j->graph.node_count(); ++v) EXPECT_EQ(r.time_ns[v], j->graph.recorded_ns[v]) << v;
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(r.windows[i].size(), 2u);
    EXPECT_EQ(r.windows[i][0].wall_ns(), 170'000);
    EXPECT_EQ(r.windows[i][1].wall_ns(), 100'000);
  }
  const JobReplay s = summarize_job_replay(j->graph);
  EXPECT_TRUE(s.replayed);
  EXPECT_EQ(s.ranks, 2);
  EXPECT_EQ(s.steps, 4);
  EXPECT_EQ(s.max_abs_error_pct, 0.0);
}

TEST(JobReplay, FixingTheStragglerShortensTheOtherRanksStep) {
  auto j = straggler_job();
  ASSERT_TRUE(j->graph.usable());
  JobReplayInput in = job_recorded_input(j->graph);
  in.dur_ns[compute_node(*j, 1)] = 100'000;  // rank 1 computes as fast as rank 0
  const JobReplayResult r = replay_job(j->graph, in);
  // Both arrive at 105 us; the all-reduce ends 10 us later, the syncs return
  // at 120 us and step 2 starts at 130 us on both ranks: rank 0's step 1,
  // whose own work did not change, is 40 us shorter.
  const JobCollective& c = j->graph.collectives[0];
  EXPECT_EQ(r.time_ns[c.end[0]], 115'000);
  EXPECT_EQ(r.time_ns[c.end[1]], 115'000);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(r.windows[i].size(), 2u) << i;
    EXPECT_EQ(r.windows[i][0].wall_ns(), 130'000) << i;
    EXPECT_EQ(r.windows[i][1].wall_ns(), 100'000) << i;
  }
  // Alone, rank 0's replay keeps its recorded wait: only the job replay sees it.
  EXPECT_EQ(replay(j->graphs[0], recorded_input(j->graphs[0])).windows[0].wall_ns(), 170'000);
}

TEST(JobReplay, DelayingOneRankDelaysTheOther) {
  auto j = straggler_job();
  ASSERT_TRUE(j->graph.usable());
  JobReplayInput in = job_recorded_input(j->graph);
  in.dur_ns[compute_node(*j, 0)] = 130'000;  // rank 0 arrives at 135 us: still before rank 1
  JobReplayResult r = replay_job(j->graph, in);
  EXPECT_EQ(r.windows[1][0].wall_ns(), 170'000);
  in.dur_ns[compute_node(*j, 0)] = 160'000;  // rank 0 arrives at 165 us, 20 us after rank 1
  r = replay_job(j->graph, in);
  EXPECT_EQ(r.time_ns[j->graph.collectives[0].end[1]], 175'000);
  EXPECT_EQ(r.windows[1][0].wall_ns(), 190'000);  // rank 1, unchanged itself, waits 20 us longer
  EXPECT_EQ(r.windows[0][0].wall_ns(), 190'000);
  EXPECT_EQ(last_arrival(j->graph, r, 0).rank, 0);
  EXPECT_EQ(last_arrival(j->graph, r, 0).wait_ns, 20'000);
}

TEST(JobReplay, TheJoinNamesTheRankThatMadeTheOthersWait) {
  auto j = straggler_job();
  ASSERT_TRUE(j->graph.usable());
  const JobReplayResult r = replay_job(j->graph, job_recorded_input(j->graph));
  const JobCollective& c = j->graph.collectives[0];
  // Rank 0's end of the all-reduce was set by the join, and the join by
  // rank 1's arrival: the walk back from rank 0 crosses to rank 1 there.
  const uint32_t e0 = r.binding[c.end[0]];
  ASSERT_NE(e0, kNoEdge);
  EXPECT_EQ(j->graph.edge_kind[e0], JobEdgeKind::kRelease);
  EXPECT_EQ(j->graph.edges[e0].from, c.join);
  const uint32_t ej = r.binding[c.join];
  ASSERT_NE(ej, kNoEdge);
  EXPECT_EQ(j->graph.edge_kind[ej], JobEdgeKind::kArrival);
  EXPECT_EQ(j->graph.edges[ej].from, c.arrival[1]);
  EXPECT_EQ(j->graph.rank_of[j->graph.edges[ej].from], 1u);
  const LastArrival last = last_arrival(j->graph, r, 0);
  EXPECT_EQ(last.rank, 1);
  EXPECT_EQ(last.wait_ns, 40'000);
  // The work after the all-reduce on rank 0 (its sync's return) waits for rank 0's end.
  bool sync_after_end = false;
  for (size_t v = 0; v < j->graph.node_count(); ++v)
    if (r.binding[v] != kNoEdge && j->graph.edges[r.binding[v]].from == c.end[0]) sync_after_end = true;
  EXPECT_TRUE(sync_after_end);
}

TEST(JobReplay, CallsNotOnEveryRankGetANoteAndNoEdge) {
  std::vector<std::string> r0 = two_step_rank(100'000, 155'000), r1 = two_step_rank(140'000, 155'000);
  // A second all-reduce on rank 0 only, in step 2.
  r0.push_back(launch(176'000, 500, 4));
  r0.push_back(kernel(kAllReduce, 195'000, 5'000, 7, 4));
  auto j = build_job(diagnose_ranks({r0, r1}));
  ASSERT_TRUE(j->graph.usable());
  EXPECT_EQ(j->graph.collectives.size(), 1u);
  EXPECT_EQ(j->graph.unmatched_calls, 1);
  ASSERT_FALSE(j->graph.notes.empty());
  EXPECT_NE(j->graph.notes[0].find("1 collective calls are not on every rank"), std::string::npos) << j->graph.notes[0];
  EXPECT_NE(j->graph.notes[0].find("rank 0: 1, rank 1: 1"), std::string::npos) << j->graph.notes[0];
  const JobReplay s = summarize_job_replay(j->graph);
  EXPECT_TRUE(s.replayed);
  EXPECT_EQ(s.max_abs_error_pct, 0.0);
}

TEST(JobReplay, ARankWithoutCollectivesLeavesTheRanksUntied) {
  std::vector<std::string> r1 = {step(1, 0, 170'000), launch(1'000, 500, 1), kernel(kCompute, 5'000, 100'000, 7, 1),
                                 step(2, 170'000, 100'000)};
  auto j = build_job(diagnose_ranks({two_step_rank(100'000, 155'000), r1}));
  ASSERT_TRUE(j->graph.usable());
  EXPECT_TRUE(j->graph.collectives.empty());
  EXPECT_EQ(j->graph.unmatched_calls, 1);
  const JobReplay s = summarize_job_replay(j->graph);
  EXPECT_TRUE(s.replayed);
  EXPECT_EQ(s.max_abs_error_pct, 0.0);
  bool untied = false;
  for (const std::string& n : s.notes) untied = untied || n.find("no synchronizing collective is matched across ranks") != std::string::npos;
  EXPECT_TRUE(untied);
}

TEST(JobReplay, RanksMissingFromTheSetGetANote) {
  // Two of four ranks: still tied between themselves, and said so.
  auto j = build_job(diagnose_ranks({two_step_rank(100'000, 155'000), two_step_rank(140'000, 155'000)},
                                    R"("distributedInfo": {"backend": "nccl", "world_size": 4})"));
  ASSERT_TRUE(j->graph.usable());
  EXPECT_EQ(j->graph.collectives.size(), 1u);
  ASSERT_EQ(j->graph.notes.size(), 1u);
  EXPECT_NE(j->graph.notes[0].find("the traces hold 2 of the job's 4 ranks"), std::string::npos) << j->graph.notes[0];
  EXPECT_EQ(summarize_job_replay(j->graph).max_abs_error_pct, 0.0);
}

TEST(JobReplay, ARankWithNothingToReplayLeavesNoJobGraph) {
  // Rank 1's trace holds no runtime call, step or GPU work.
  auto j = build_job(diagnose_ranks({two_step_rank(100'000, 155'000),
                                     {analysis::testing_support::host_span("cpu_op", "aten::add", 1'000, 2'000)}}));
  EXPECT_FALSE(j->graph.usable());
  ASSERT_EQ(j->graph.notes.size(), 1u);
  EXPECT_NE(j->graph.notes[0].find("rank 1's graph cannot be replayed"), std::string::npos) << j->graph.notes[0];
  const JobReplay s = summarize_job_replay(j->graph);
  EXPECT_FALSE(s.replayed);
  EXPECT_EQ(s.ranks, 0);
  // The one-rank replays stand.
  EXPECT_TRUE(j->run->d.replay[0].replayed);
  EXPECT_FALSE(j->run->d.job_replay.replayed);
  EXPECT_EQ(j->run->d.job_replay.notes, s.notes);
}

TEST(JobReplay, CollectivesIssuedInDifferentOrdersAreACycleNotACrash) {
  // Rank 0 runs all-reduce then all-gather on one stream, rank 1 the other
  // way round: matched by (operation, ordinal), each waits for the other.
  auto rank = [](const char* first, const char* second) {
    return std::vector<std::string>{step(1, 0, 200'000),
                                    launch(1'000, 500, 1), kernel(first, 10'000, 20'000, 7, 1),
                                    launch(2'000, 500, 2), kernel(second, 30'000, 20'000, 7, 2),
                                    step(2, 200'000, 50'000)};
  };
  auto j = build_job(diagnose_ranks({rank(kAllReduce, kAllGather), rank(kAllGather, kAllReduce)}));
  EXPECT_FALSE(j->graph.usable());
  EXPECT_GT(j->graph.cycle_nodes, 0);
  const JobReplay s = summarize_job_replay(j->graph);
  EXPECT_FALSE(s.replayed);
  EXPECT_EQ(s.ranks, 2);
  bool cycle = false;
  for (const std::string& n : s.notes) cycle = cycle || n.find("close a dependency cycle") != std::string::npos;
  EXPECT_TRUE(cycle);
  for (const RankReplay& r : j->run->d.replay) EXPECT_TRUE(r.replayed) << r.rank;
}

TEST(JobReplay, AClockOffsetBetweenRanksIsAlignedAway) {
  // Rank 1's clock runs 2 s ahead: its times are moved by the offset the
  // alignment measured from the all-reduce's ends, and the what-if answer
  // is the one on common clocks.
  const std::vector<std::string> r1 = two_step_rank(140'000, 155'000);
  std::vector<std::string> late;
  for (std::string e : r1) {
    // Every "ts" of rank 1 plus 2 s.
    const size_t p = e.find("\"ts\": ");
    ASSERT_NE(p, std::string::npos) << e;
    const size_t q = e.find(',', p);
    const double ts = std::stod(e.substr(p + 6, q - p - 6));
    e = e.substr(0, p + 6) + analysis::testing_support::us_text(static_cast<int64_t>(ts * 1000 + 0.5) + 2'000'000'000) +
        e.substr(q);
    late.push_back(e);
  }
  auto k = build_job(diagnose_ranks({two_step_rank(100'000, 155'000), late}));
  ASSERT_TRUE(k->graph.usable()) << (k->graph.notes.empty() ? "" : k->graph.notes[0]);
  EXPECT_EQ(k->run->multi.clocks.status, "corrected");
  JobReplayInput in = job_recorded_input(k->graph);
  in.dur_ns[compute_node(*k, 1)] = 100'000;
  const JobReplayResult r = replay_job(k->graph, in);
  EXPECT_EQ(r.windows[0][0].wall_ns(), 130'000);
  EXPECT_EQ(r.windows[1][0].wall_ns(), 130'000);
  EXPECT_EQ(summarize_job_replay(k->graph).max_abs_error_pct, 0.0);
}

TEST(JobReplay, HostCollectivesTieCpuOnlyRanks) {
  // gloo on CPU: no communication kernel, the c10d host ranges are the calls.
  // Rank 1 reaches the all-reduce 30 us after rank 0; the call takes 10 us
  // once both are in. A zero-length range at a step's start closes no cycle.
  using analysis::testing_support::host_span;
  auto rank = [](int64_t arrive, int64_t leave) {
    return std::vector<std::string>{step(1, 0, 100'000), host_span("cpu_op", "gloo:all_reduce", arrive, leave - arrive),
                                    step(2, 100'000, 50'000), host_span("cpu_op", "gloo:all_reduce", 100'000, 0)};
  };
  auto j = build_job(diagnose_ranks({rank(20'000, 60'000), rank(50'000, 60'000)}));
  ASSERT_TRUE(j->graph.usable()) << (j->graph.notes.empty() ? "" : j->graph.notes.back());
  ASSERT_EQ(j->graph.collectives.size(), 2u);
  EXPECT_EQ(j->graph.collectives[0].transfer_ns, 10'000);
  EXPECT_EQ(summarize_job_replay(j->graph).max_abs_error_pct, 0.0);
  // Rank 1 reaches it 30 us earlier: both leave at 30 us, and rank 0's step,
  // which spent 40 us 60 us -> 100 us after the call, is 30 us shorter.
  JobReplayInput in = job_recorded_input(j->graph);
  const uint32_t a1 = j->graph.collectives[0].arrival[1];
  for (uint32_t k = j->graph.in_begin[a1]; k < j->graph.in_begin[a1 + 1]; ++k) in.edge_w_ns[k] -= 30'000;
  const JobReplayResult r = replay_job(j->graph, in);
  EXPECT_EQ(r.time_ns[j->graph.collectives[0].end[0]] - r.time_ns[j->graph.node(0, 0)], 30'000);
  EXPECT_EQ(r.windows[0][0].wall_ns(), 70'000);
  EXPECT_EQ(r.windows[1][0].wall_ns(), 70'000);
}

TEST(JobReplay, ClocksThatCannotBeComparedLeaveNoJobGraph) {
  // Only send/recv kernels (nothing to align the clocks from) and rank 1's
  // recorded range 2 s after rank 0's: the alignment refuses, and so does
  // the job graph; each rank's own replay stands.
  auto rank = [](int64_t t0) {
    const char* sendrecv = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)";
    return std::vector<std::string>{step(1, t0, 100'000), launch(t0 + 1'000, 500, 1), kernel(sendrecv, t0 + 5'000, 10'000, 7, 1)};
  };
  auto j = build_job(diagnose_ranks({rank(0), rank(2'000'000'000)}));
  ASSERT_EQ(j->run->multi.clocks.status, "refused");
  EXPECT_FALSE(j->graph.usable());
  ASSERT_EQ(j->graph.notes.size(), 1u);
  EXPECT_NE(j->graph.notes[0].find("clocks cannot be compared"), std::string::npos) << j->graph.notes[0];
  for (const RankReplay& r : j->run->d.replay) EXPECT_TRUE(r.replayed) << r.rank;
}

// The real multi-rank traces: with the recorded durations every rank's step
// windows come back within kFidelityLimitPct.
void expect_job_faithful(const std::string& folder, size_t ranks, size_t tied) {
  SCOPED_TRACE(folder);
  auto j = build_job(diagnose::testing_support::diagnose_folder(folder));
  ASSERT_EQ(j->graph.ranks.size(), ranks);
  ASSERT_TRUE(j->graph.usable()) << (j->graph.notes.empty() ? "" : j->graph.notes.back());
  EXPECT_EQ(j->graph.collectives.size(), tied);
  const JobReplay s = summarize_job_replay(j->graph);
  EXPECT_TRUE(s.replayed);
  EXPECT_GT(s.steps, 0);
  EXPECT_LE(s.max_abs_error_pct, kFidelityLimitPct);
  // The diagnosis carries the same summary.
  EXPECT_EQ(j->run->d.job_replay.max_abs_error_pct, s.max_abs_error_pct);
  EXPECT_EQ(j->run->d.job_replay.collective_edges, s.collective_edges);
}

TEST(JobReplayFidelity, GlooCpuTraces) {
  for (const char* s : {"healthy", "straggler"})
    expect_job_faithful(stepscope::testing::test_data_dir() + "/dist_gloo_cpu/" + s, 8, 3);  // the all-reduces
}

TEST(JobReplayFidelity, SharedMultiRankTraces) {
  const std::string shared = stepscope::testing::shared_dir();
  if (!std::filesystem::is_directory(shared + "/conformance")) GTEST_SKIP() << "no ../shared";
  expect_job_faithful(shared + "/conformance/param/dlrm_8rank", 8, 3);
  // Only SendRecv kernels: point-to-point, not tied; the ranks replay side by side.
  expect_job_faithful(shared + "/conformance/hta/trace_filter", 2, 0);
}

// The edge into rank `i`'s arrival at instance `c` from its previous host
// mark (a host collective: gloo on CPU).
uint32_t host_arrival_edge(const JobGraph& g, size_t c, size_t i) {
  const uint32_t a = g.collectives[c].arrival[i];
  for (uint32_t k = g.in_begin[a]; k < g.in_begin[a + 1]; ++k)
    if (g.edge_kind[k] == JobEdgeKind::kHostCall) return k;
  ADD_FAILURE() << "no host-call edge into the arrival";
  return 0;
}

int64_t total(const std::vector<StepWindow>& w) {
  int64_t t = 0;
  for (const StepWindow& s : w) t += s.wall_ns();
  return t;
}

// Real 8-rank DDP over gloo (tests/data/dist_gloo_cpu, meta.json): rank 7
// sleeps 40 ms before every forward. It is the last to reach most
// all-reduces, and without its sleep every other rank's steps shorten.
TEST(JobReplayWhatIf, FixingTheStragglerOfARealRunShortensEveryRank) {
  const std::string dir = stepscope::testing::test_data_dir() + "/dist_gloo_cpu/straggler";
  auto j = build_job(diagnose::testing_support::diagnose_folder(dir));
  ASSERT_TRUE(j->graph.usable());
  ASSERT_EQ(j->graph.collectives.size(), 3u);
  const size_t slow = 7;
  const int64_t sleep_ns = 40'000'000;
  const JobReplayResult r = replay_job(j->graph, job_recorded_input(j->graph));
  int last = 0;
  for (size_t c = 0; c < j->graph.collectives.size(); ++c) last += last_arrival(j->graph, r, c).rank == 7;
  EXPECT_GE(last, 2);
  JobReplayInput in = job_recorded_input(j->graph);
  for (size_t c = 0; c < j->graph.collectives.size(); ++c) {
    int64_t& w = in.edge_w_ns[host_arrival_edge(j->graph, c, slow)];
    w = std::max<int64_t>(0, w - sleep_ns);
  }
  const JobReplayResult f = replay_job(j->graph, in);
  for (size_t i = 0; i < 8; ++i) {
    const int64_t saved = total(r.windows[i]) - total(f.windows[i]);
    EXPECT_GT(saved, 5'000'000) << "rank " << i;  // measured 18.9 ms on ranks 0-6
    EXPECT_LE(saved, 3 * sleep_ns) << "rank " << i;
  }
}

// The healthy run with rank 0 held back 40 ms before every all-reduce:
// every rank's steps grow, by the delay less the slack rank 0 had.
TEST(JobReplayWhatIf, DelayingOneRankOfARealRunDelaysEveryRank) {
  auto j = build_job(diagnose::testing_support::diagnose_folder(stepscope::testing::test_data_dir() + "/dist_gloo_cpu/healthy"));
  ASSERT_TRUE(j->graph.usable());
  const int64_t delay = 40'000'000;
  const JobReplayResult r = replay_job(j->graph, job_recorded_input(j->graph));
  JobReplayInput in = job_recorded_input(j->graph);
  for (size_t c = 0; c < j->graph.collectives.size(); ++c) in.edge_w_ns[host_arrival_edge(j->graph, c, 0)] += delay;
  const JobReplayResult f = replay_job(j->graph, in);
  for (size_t c = 0; c < j->graph.collectives.size(); ++c) EXPECT_EQ(last_arrival(j->graph, f, c).rank, 0);
  for (size_t i = 1; i < 8; ++i) {
    const int64_t lost = total(f.windows[i]) - total(r.windows[i]);
    EXPECT_GE(lost, 3 * delay / 2) << "rank " << i;  // measured 95.0 ms
    EXPECT_LE(lost, 3 * delay) << "rank " << i;
  }
}

// The same on GPU kernels (PARAM's 8-rank DLRM): rank 0's all-reduce
// kernels start 50 ms later and every other rank's step follows.
TEST(JobReplayWhatIf, DelayingOneRankOfARealGpuRunDelaysEveryRank) {
  const std::string shared = stepscope::testing::shared_dir();
  if (!std::filesystem::is_directory(shared + "/conformance")) GTEST_SKIP() << "no ../shared";
  auto j = build_job(diagnose::testing_support::diagnose_folder(shared + "/conformance/param/dlrm_8rank"));
  ASSERT_TRUE(j->graph.usable());
  const int64_t delay = 50'000'000;
  const JobReplayResult r = replay_job(j->graph, job_recorded_input(j->graph));
  JobReplayInput in = job_recorded_input(j->graph);
  in.residual_ns[j->graph.collectives[0].arrival[0]] += delay;  // the first tied all-reduce
  const JobReplayResult f = replay_job(j->graph, in);
  EXPECT_EQ(last_arrival(j->graph, f, 0).rank, j->graph.ranks[0].rank);
  for (size_t i = 1; i < j->graph.ranks.size(); ++i) {
    const int64_t lost = total(f.windows[i]) - total(r.windows[i]);
    EXPECT_GE(lost, delay / 2) << "rank " << i;  // measured 45.0-46.2 ms
    EXPECT_LE(lost, delay) << "rank " << i;
  }
}

}  // namespace
}  // namespace stepscope::whatif
