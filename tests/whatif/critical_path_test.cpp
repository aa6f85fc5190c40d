// The critical path of each step: exact paths on hand-made steps (paced by
// the host's launches, by the GPU's queued kernels, by a sync waiting for a
// kernel), and on every committed trace the path's segments tiling each
// step's window, so that they sum to its wall time exactly.
#include <gtest/gtest.h>

#include <filesystem>

#include "analysis/gpu_timeline.h"
#include "diagnose/diagnose_fixtures.h"
#include "diagnose/replay_graph.h"
#include "whatif/critical_path.h"
#include "whatif/rank_critical_path.h"
#include "whatif/built_graph.h"
#include "whatif/replay.h"

namespace stepscope::whatif {
namespace {

using analysis::testing_support::host_span;
using analysis::testing_support::kernel;
using analysis::testing_support::launch;
using analysis::testing_support::step;
using diagnose::testing_support::diagnose_folder;
using diagnose::testing_support::diagnose_inline;
using C = PathCategory;

using Built = testing_support::BuiltGraph;
Built build(const std::vector<std::string>& events) { return testing_support::build_graph(events); }

std::vector<StepPath> paths_of(const Built& b) {
  const ReplayInput in = recorded_input(b.graph);
  return critical_paths(b.graph, in, replay(b.graph, in), b.timeline);
}

// (start, end, category) of each segment, in time order.
struct Seg {
  int64_t start, end;
  C cat;
  bool operator==(const Seg&) const = default;
};
std::vector<Seg> segs(const StepPath& p) {
  std::vector<Seg> out;
  for (const PathSegment& s : p.segments) out.push_back({s.start_ns, s.end_ns, s.category});
  return out;
}
void PrintTo(const Seg& s, std::ostream* os) { *os << "[" << s.start << ", " << s.end << ") " << to_string(s.cat); }

int64_t cat(const StepPath& p, C c) { return p.by_category_ns[static_cast<size_t>(c)]; }

TEST(CriticalPath, ALaunchBoundStepIsHostTimeAndLaunches) {
  // One step; four launches 10 us apart, each kernel 2 us long starting 5 us
  // after its launch on an idle stream. The last kernel ends after the step:
  // the window runs to its end, and the host's pace is the path.
  std::vector<std::string> ev = {step(1, 0, 46'000), host_span("cpu_op", "aten::mul", 30'000, 15'000)};
  for (int k = 0; k < 4; ++k) {
    const int64_t t = 10'000 + 10'000 * k;
    ev.push_back(launch(t, 4'000, k + 1));
    ev.push_back(kernel("void at::native::vectorized_elementwise_kernel<4>", t + 5'000, 2'000, 7, k + 1));
  }
  Built b = build(ev);
  ASSERT_TRUE(b.graph.usable());
  const std::vector<StepPath> p = paths_of(b);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].start_ns, 0);
  EXPECT_EQ(p[0].end_ns, 47'000);
  const std::vector<Seg> want = {{0, 10'000, C::kHostOther},       {10'000, 14'000, C::kHostRuntime},
                                 {14'000, 20'000, C::kHostOther},  {20'000, 24'000, C::kHostRuntime},
                                 {24'000, 30'000, C::kHostOther},  {30'000, 34'000, C::kHostRuntime},
                                 {34'000, 40'000, C::kHostOther},  {40'000, 45'000, C::kLaunch},
                                 {45'000, 47'000, C::kGpuCompute}};
  EXPECT_EQ(segs(p[0]), want);
  EXPECT_EQ(cat(p[0], C::kHostOther), 28'000);
  EXPECT_EQ(cat(p[0], C::kHostRuntime), 12'000);

  // Named: the longest host stretch lies between marks no CPU op covers; the
  // one inside aten::mul takes the op's name.
  const RankCriticalPath r = summarize_critical_path(0, b.graph, b.timeline, *b.run->stores[0]);
  ASSERT_EQ(r.steps.size(), 1u);
  const auto& top = r.steps[0].top;
  ASSERT_EQ(top.size(), kTopPathSegments);
  EXPECT_EQ(top[0].kind, "host_order");
  EXPECT_EQ(top[0].name, "ProfilerStep#1 start -> cudaLaunchKernel start");
  EXPECT_EQ(top[0].dur_ns, 10'000);
  EXPECT_EQ(top[3].start_ns, 34'000);
  EXPECT_EQ(top[3].name, "aten::mul");
  EXPECT_EQ(top[4].kind, "launch");
  EXPECT_EQ(top[4].name, "void at::native::vectorized_elementwise_kernel<4>");
  EXPECT_NEAR(r.steps[0].share_pct(C::kHostOther), 100.0 * 28 / 47, 1e-9);
  // Drawn: the GPU work on its lane, everything else on the host.
  ASSERT_EQ(r.steps[0].spans.size(), 9u);
  EXPECT_EQ(r.steps[0].spans.back().device, 0);
  EXPECT_EQ(r.steps[0].spans.back().stream, 7);
  EXPECT_EQ(r.steps[0].spans.front().device, -1);
}

TEST(CriticalPath, AGpuBoundStepIsKernelsAndStreamGaps) {
  // Three 10 us kernels queued early on one stream, 1 us apart.
  const std::vector<std::string> ev = {
      step(1, 0, 20'000),
      launch(1'000, 500, 1), launch(2'000, 500, 2), launch(3'000, 500, 3),
      kernel("nvjet_sm90_tst_128x256_h_bz_NNT", 6'000, 10'000, 7, 1),
      kernel("nvjet_sm90_tst_128x256_h_bz_NNT", 17'000, 10'000, 7, 2),
      kernel("nvjet_sm90_tst_128x256_h_bz_NNT", 28'000, 10'000, 7, 3),
  };
  Built b = build(ev);
  ASSERT_TRUE(b.graph.usable());
  const std::vector<StepPath> p = paths_of(b);
  ASSERT_EQ(p.size(), 1u);
  const std::vector<Seg> want = {{0, 1'000, C::kHostOther},        {1'000, 6'000, C::kLaunch},
                                 {6'000, 16'000, C::kGpuCompute},  {16'000, 17'000, C::kStreamWait},
                                 {17'000, 27'000, C::kGpuCompute}, {27'000, 28'000, C::kStreamWait},
                                 {28'000, 38'000, C::kGpuCompute}};
  EXPECT_EQ(segs(p[0]), want);
  EXPECT_EQ(p[0].wall_ns(), 38'000);
  EXPECT_EQ(cat(p[0], C::kGpuCompute), 30'000);
  EXPECT_EQ(cat(p[0], C::kStreamWait), 2'000);
}

TEST(CriticalPath, ASyncBoundStepRunsFromTheKernelThroughTheWaitToTheHost) {
  const std::vector<std::string> ev = {
      step(1, 0, 590'000),
      launch(1'000, 5'000, 1), kernel("nvjet_sm90_tst_128x256_h_bz_NNT", 10'000, 490'000, 7, 1),  // ends 500k
      launch(20'000, 485'000, 90, "cudaStreamSynchronize"),                                        // returns 505k
      step(2, 600'000, 100'000),
      launch(610'000, 5'000, 2), kernel("void at::native::vectorized_elementwise_kernel<4>", 620'000, 10'000, 7, 2),
  };
  Built b = build(ev);
  ASSERT_TRUE(b.graph.usable());
  const std::vector<StepPath> p = paths_of(b);
  ASSERT_EQ(p.size(), 2u);
  // The launch latency is the median of 9 and 10 us: 10 us, so the first
  // launch edge keeps its recorded 9 us.
  const std::vector<Seg> want = {{0, 1'000, C::kHostOther},         {1'000, 10'000, C::kLaunch},
                                 {10'000, 500'000, C::kGpuCompute}, {500'000, 505'000, C::kSync},
                                 {505'000, 590'000, C::kHostOther}};
  EXPECT_EQ(segs(p[0]), want);
  EXPECT_EQ(p[0].segments[3].kind, SegmentKind::kEdge);
  EXPECT_EQ(b.graph.edges[p[0].segments[3].edge].kind, EdgeKind::kHostWait);

  const RankCriticalPath r = summarize_critical_path(0, b.graph, b.timeline, *b.run->stores[0]);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[0].top[0].kind, "kernel");
  EXPECT_EQ(r.steps[0].top[0].name, "nvjet_sm90_tst_128x256_h_bz_NNT");
  EXPECT_EQ(r.steps[0].top[1].name, "cudaStreamSynchronize end -> ProfilerStep#1 end");
  EXPECT_EQ(r.steps[0].top[3].kind, "host_wait");
  EXPECT_EQ(r.steps[0].top[3].name, "cudaStreamSynchronize");
  EXPECT_EQ(r.wall_ns, 590'000 + 100'000);
}

TEST(CriticalPath, WorkThatOverlapsItsPredecessorOnAStreamIsCountedOnce) {
  // The second kernel starts 5 us before the first ends on the same stream
  // (recorded so): the stream edge's weight is -5 us, and the first kernel's
  // segment stops where the second begins.
  const std::vector<std::string> ev = {
      step(1, 0, 20'000),
      launch(1'000, 2'000, 1), kernel("void at::native::vectorized_elementwise_kernel<4>", 10'000, 20'000, 7, 1),
      launch(12'000, 2'000, 2), kernel("void at::native::reduce_kernel<512, 1>", 25'000, 15'000, 7, 2),
  };
  Built b = build(ev);
  ASSERT_TRUE(b.graph.usable());
  const std::vector<StepPath> p = paths_of(b);
  ASSERT_EQ(p.size(), 1u);
  const std::vector<Seg> want = {{0, 1'000, C::kHostOther},
                                 {1'000, 10'000, C::kLaunch},
                                 {10'000, 25'000, C::kGpuCompute},
                                 {25'000, 40'000, C::kGpuCompute}};
  EXPECT_EQ(segs(p[0]), want);
  EXPECT_EQ(p[0].wall_ns(), 40'000);
  const ReplayResult r = replay(b.graph, recorded_input(b.graph));
  const Edge& bound_by = b.graph.edges[r.binding[p[0].segments[3].node]];
  EXPECT_EQ(bound_by.kind, EdgeKind::kStream);
  EXPECT_EQ(bound_by.w_ns, -5'000);
}

TEST(CriticalPath, ATraceWithoutStepsHasNoPathAndSaysSo) {
  Built b = build({launch(1'000, 3'000, 1), kernel("void at::native::vectorized_elementwise_kernel<4>", 9'000, 5'000, 7, 1)});
  const RankCriticalPath r = summarize_critical_path(0, b.graph, b.timeline, *b.run->stores[0]);
  EXPECT_TRUE(r.steps.empty());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("no ProfilerStep#N"), std::string::npos) << r.notes[0];
}

// Every rank of a committed trace: the raw paths tile the replay's windows,
// and the diagnosis' summary sums to each step's wall.
void expect_tiled(const std::string& folder) {
  SCOPED_TRACE(folder);
  auto run = diagnose_folder(folder);
  ASSERT_EQ(run->d.critical_path.size(), run->stores.size());
  for (size_t i = 0; i < run->stores.size(); ++i) {
    const trace::EventStore& store = *run->stores[i];
    const analysis::GpuTimeline tl = analysis::build_gpu_timeline(store, analysis::AnalysisOptions{});
    const StepGraph g = diagnose::build_replay_graph(store, tl, run->ranks[i].steps, diagnose::build_host_index(store));
    ASSERT_TRUE(g.usable()) << "rank " << store.rank;
    const ReplayInput in = recorded_input(g);
    const ReplayResult r = replay(g, in);
    const std::vector<StepPath> paths = critical_paths(g, in, r, tl);
    ASSERT_EQ(paths.size(), r.windows.size()) << "rank " << store.rank;
    for (size_t k = 0; k < paths.size(); ++k) {
      const StepPath& p = paths[k];
      EXPECT_EQ(p.step, r.windows[k].step);
      EXPECT_EQ(p.start_ns, r.windows[k].start_ns);
      EXPECT_EQ(p.end_ns, r.windows[k].end_ns);
      ASSERT_FALSE(p.segments.empty());
      EXPECT_EQ(p.segments.front().start_ns, p.start_ns);
      EXPECT_EQ(p.segments.back().end_ns, p.end_ns);
      int64_t sum = 0;
      for (size_t s = 0; s < p.segments.size(); ++s) {
        EXPECT_GT(p.segments[s].dur_ns(), 0);
        if (s > 0) {
          EXPECT_EQ(p.segments[s].start_ns, p.segments[s - 1].end_ns);
        }
        sum += p.segments[s].dur_ns();
      }
      EXPECT_EQ(sum, p.wall_ns()) << "rank " << store.rank << " step " << p.step;
    }
    const RankCriticalPath& summary = run->d.critical_path[i];
    ASSERT_EQ(summary.steps.size(), run->d.replay[i].steps.size());
    for (size_t k = 0; k < summary.steps.size(); ++k) {
      const StepCriticalPath& s = summary.steps[k];
      int64_t sum = 0;
      for (int64_t v : s.by_category_ns) sum += v;
      EXPECT_EQ(sum, s.wall_ns());
      EXPECT_EQ(s.wall_ns(), run->d.replay[i].steps[k].replayed_ns);
      EXPECT_EQ(s.spans.front().start_ns, s.start_ns);
      EXPECT_EQ(s.spans.back().end_ns, s.end_ns);
    }
  }
}

TEST(CriticalPathTiling, EveryExampleTrace) {
  for (const auto& e : std::filesystem::directory_iterator(diagnose::testing_support::examples_dir()))
    if (e.is_directory()) expect_tiled(e.path().string());
}

TEST(CriticalPathTiling, EverySharedTrace) {
  const auto folders = analysis::testing_support::shared_trace_folders();
  if (folders.empty()) GTEST_SKIP() << "no ../shared";
  for (const std::string& f : folders) expect_tiled(stepscope::testing::shared_dir() + "/" + f);
}

}  // namespace
}  // namespace stepscope::whatif
