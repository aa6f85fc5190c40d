// The replay graph: exact answers on hand-made steps (a launch-bound step, a
// sync waiting for its kernel, a wait across streams), and on every committed
// trace the replay of the recorded durations reproducing each step's window.
#include <gtest/gtest.h>

#include <filesystem>

#include "analysis/gpu_timeline.h"
#include "diagnose/diagnose_fixtures.h"
#include "diagnose/replay_graph.h"
#include "whatif/rank_replay.h"
#include "whatif/built_graph.h"
#include "whatif/replay.h"

namespace stepscope::whatif {
namespace {

using analysis::testing_support::kernel;
using analysis::testing_support::launch;
using analysis::testing_support::step;
using diagnose::testing_support::diagnose_folder;
using diagnose::testing_support::diagnose_inline;

using Built = testing_support::BuiltGraph;
Built build(const std::vector<std::string>& events) { return testing_support::build_graph(events); }

int64_t edges_of(const StepGraph& g, EdgeKind k) {
  int64_t n = 0;
  for (const Edge& e : g.edges) n += e.kind == k;
  return n;
}

TEST(Replay, LaunchBoundStepDoesNotShortenWithFasterKernels) {
  // Two steps; each kernel starts 5 us after its launch on an idle stream.
  std::vector<std::string> ev = {step(1, 0, 100'000), step(2, 100'000, 100'000)};
  for (int k = 0; k < 6; ++k) {
    const int64_t t = 10'000 + 30'000 * k;
    ev.push_back(launch(t, 4'000, k + 1));
    ev.push_back(kernel("void at::native::vectorized_elementwise_kernel<4>", t + 5'000, 2'000, 7, k + 1));
  }
  Built b = build(ev);
  ASSERT_TRUE(b.graph.usable());
  EXPECT_EQ(b.graph.launch_latency_ns, 5'000);
  EXPECT_EQ(edges_of(b.graph, EdgeKind::kLaunch), 6);
  EXPECT_EQ(edges_of(b.graph, EdgeKind::kStream), 5);

  const ReplayResult recorded = replay(b.graph, recorded_input(b.graph));
  ASSERT_EQ(recorded.windows.size(), 2u);
  EXPECT_EQ(recorded.windows[0].wall_ns(), 100'000);
  EXPECT_EQ(recorded.windows[1].wall_ns(), 100'000);
  for (size_t v = 0; v < b.graph.node_count(); ++v) EXPECT_EQ(recorded.time_ns[v], b.graph.recorded_ns[v]) << v;

  ReplayInput faster = recorded_input(b.graph);
  for (int64_t& d : faster.gpu_dur_ns) d /= 2;
  const ReplayResult r = replay(b.graph, faster);
  EXPECT_EQ(r.windows[0].wall_ns(), 100'000);  // the host sets the pace
  EXPECT_EQ(r.windows[1].wall_ns(), 100'000);
}

TEST(Replay, ASyncWaitsForItsKernelAndMovesWithIt) {
  const std::vector<std::string> ev = {
      step(1, 0, 590'000),
      launch(1'000, 5'000, 1), kernel("nvjet_sm90_tst_128x256_h_bz_NNT", 10'000, 490'000, 7, 1),  // ends 500k
      launch(20'000, 485'000, 90, "cudaStreamSynchronize"),                                        // returns 505k
      step(2, 600'000, 100'000),
      launch(610'000, 5'000, 2), kernel("void at::native::vectorized_elementwise_kernel<4>", 620'000, 10'000, 7, 2),
  };
  Built b = build(ev);
  ASSERT_TRUE(b.graph.usable());
  EXPECT_EQ(edges_of(b.graph, EdgeKind::kHostWait), 1);
  EXPECT_EQ(b.graph.sync_release_ns, 5'000);

  ReplayInput half = recorded_input(b.graph);
  half.gpu_dur_ns[0] = 245'000;  // the big kernel twice as fast
  const ReplayResult r = replay(b.graph, half);
  ASSERT_EQ(r.windows.size(), 2u);
  // The sync returns 245 us earlier, and so does everything the host does after it.
  EXPECT_EQ(r.windows[0].wall_ns(), 590'000 - 245'000);
  EXPECT_EQ(r.windows[1].wall_ns(), 100'000);

  // Without the wait (the sync removed) the host runs on after its own cost.
  ReplayInput no_sync = recorded_input(b.graph);
  for (size_t i = 0; i < b.graph.edges.size(); ++i)
    if (b.graph.edges[i].kind == EdgeKind::kHostWait) no_sync.edge_w_ns[i] = kDropped;
  const ReplayResult n = replay(b.graph, no_sync);
  EXPECT_EQ(n.windows[0].wall_ns(), 590'000 - (505'000 - 20'000 - b.graph.sync_release_ns));
}

TEST(Replay, WorkThatWaitedOnAnotherStreamFollowsIt) {
  std::vector<std::string> ev = {step(1, 0, 400'000)};
  // A on stream 7 (10-50 us); B on stream 8, launched at 4 us, starts at 52 us:
  // after A, not after its launch.
  ev.push_back(launch(1'000, 3'000, 1));
  ev.push_back(kernel("void at::native::vectorized_elementwise_kernel<4>", 10'000, 40'000, 7, 1));
  ev.push_back(launch(4'000, 3'000, 2));
  ev.push_back(kernel("void at::native::reduce_kernel<512, 1>", 52'000, 10'000, 8, 2));
  // Launch-bound work that sets the typical launch latency at 9 us.
  for (int k = 0; k < 4; ++k) {
    const int64_t t = 100'000 + 50'000 * k;
    ev.push_back(launch(t, 3'000, 10 + k));
    ev.push_back(kernel("void at::native::vectorized_elementwise_kernel<4>", t + 9'000, 5'000, 7, 10 + k));
  }
  Built b = build(ev);
  ASSERT_TRUE(b.graph.usable());
  EXPECT_EQ(b.graph.launch_latency_ns, 9'000);
  ASSERT_EQ(edges_of(b.graph, EdgeKind::kCrossStream), 1);

  ReplayInput in = recorded_input(b.graph);
  size_t a = 0, bk = 0;
  for (size_t k = 0; k < b.timeline.activities.size(); ++k) {
    if (b.timeline.activities[k].start_ns == 10'000) a = k;
    if (b.timeline.activities[k].start_ns == 52'000) bk = k;
  }
  in.gpu_dur_ns[a] = 20'000;  // A ends at 30 us
  const ReplayResult r = replay(b.graph, in);
  EXPECT_EQ(r.time_ns[b.graph.gpu_node(bk)], 32'000);  // 2 us after A, as recorded
}

TEST(Replay, ATraceWithoutStepsSaysSo) {
  Built b = build({launch(1'000, 3'000, 1), kernel("void at::native::vectorized_elementwise_kernel<4>", 9'000, 5'000, 7, 1)});
  const RankReplay r = summarize_replay(0, b.graph);
  EXPECT_TRUE(r.steps.empty());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("no ProfilerStep#N"), std::string::npos) << r.notes[0];
}

// Every committed trace: the replay of the recorded durations gives each
// step's measured window, and that window is the attribution's.
void expect_faithful(const std::string& folder) {
  SCOPED_TRACE(folder);
  auto run = diagnose_folder(folder);
  ASSERT_EQ(run->d.replay.size(), run->d.attribution.size());
  for (size_t i = 0; i < run->d.replay.size(); ++i) {
    const RankReplay& r = run->d.replay[i];
    ASSERT_TRUE(r.replayed) << "rank " << r.rank << ": " << (r.notes.empty() ? "" : r.notes[0]);
    EXPECT_LE(r.max_abs_error_pct, kFidelityLimitPct) << "rank " << r.rank;
    const auto& steps = run->d.attribution[i].steps;
    if (!run->d.attribution[i].from_profiler_steps) continue;
    ASSERT_EQ(r.steps.size(), steps.size()) << "rank " << r.rank;
    for (size_t k = 0; k < steps.size(); ++k) EXPECT_EQ(r.steps[k].measured_ns, steps[k].wall_ns());
  }
}

TEST(ReplayFidelity, EveryExampleTrace) {
  for (const auto& e : std::filesystem::directory_iterator(diagnose::testing_support::examples_dir()))
    if (e.is_directory()) expect_faithful(e.path().string());
}

TEST(ReplayFidelity, EverySharedTrace) {
  const auto folders = analysis::testing_support::shared_trace_folders();
  if (folders.empty()) GTEST_SKIP() << "no ../shared";
  for (const std::string& f : folders) expect_faithful(stepscope::testing::shared_dir() + "/" + f);
}

// Faster GPU work or less CPU time can only shorten the run.
TEST(ReplayFidelity, ShorterDurationsNeverLengthenTheRun) {
  for (const char* name : {"host_bound_tiny", "item_sync", "dataloader_stall", "cuda_graph"}) {
    SCOPED_TRACE(name);
    auto run = diagnose_folder(diagnose::testing_support::examples_dir() + "/" + name);
    const trace::EventStore& store = *run->stores[0];
    const analysis::GpuTimeline tl = analysis::build_gpu_timeline(store, analysis::AnalysisOptions{});
    const StepGraph g = diagnose::build_replay_graph(store, tl, run->ranks[0].steps, diagnose::build_host_index(store));
    const int64_t base = replay(g, recorded_input(g)).total_ns;
    ReplayInput gpu = recorded_input(g), host = recorded_input(g);
    for (int64_t& d : gpu.gpu_dur_ns) d /= 2;
    for (size_t i = 0; i < g.edges.size(); ++i)
      if (g.edges[i].kind == EdgeKind::kHostOrder) host.edge_w_ns[i] /= 2;
    EXPECT_LE(replay(g, gpu).total_ns, base);
    const int64_t host_total = replay(g, host).total_ns;
    EXPECT_LE(host_total, base);
    EXPECT_LT(host_total, base);  // every example's steps are paced in part by the host
  }
}

}  // namespace
}  // namespace stepscope::whatif
