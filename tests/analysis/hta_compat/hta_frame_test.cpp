// HTA's frame on small inline traces: the µs rounding, the drops, the
// index_correlation link, the alignment and the step filter (docs/hta_compat.md §1).
#include "analysis/hta_compat/hta_frame.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trace/trace_fixtures.h"

namespace stepscope::analysis::hta {
namespace {

using testing::TempDir;
using testing::trace_doc;
using testing::x_event;

struct Loaded {
  TempDir dir;
  std::vector<trace::EventStore> stores;
};

// Reads each document as one rank file (rank-<i>.json).
void load(Loaded& l, const std::vector<std::string>& docs) {
  l.stores.resize(docs.size());
  for (size_t i = 0; i < docs.size(); ++i) {
    auto outcome = testing::read(l.dir.write("rank-" + std::to_string(i) + ".json", docs[i]), l.stores[i]);
    ASSERT_TRUE(outcome.ok) << outcome.error;
  }
}

HtaFrames frames_of(const Loaded& l) {
  std::vector<const trace::EventStore*> ptrs;
  for (const auto& s : l.stores) ptrs.push_back(&s);
  return build_hta_frames(ptrs);
}

const HtaEvent* find_index(const HtaRankFrame& f, int64_t index) {
  for (const auto& e : f.events)
    if (e.index == index) return &e;
  return nullptr;
}

// Two steps, fractional timestamps: rounding, drops, link and step filter at once.
std::string two_step_trace() {
  return trace_doc({
      R"({"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "python"}})",     // 0
      x_event("user_annotation", "ProfilerStep#1", "1000.5", "100"),                                 // 1
      x_event("cuda_runtime", "cudaLaunchKernel", "1010.25", "5", "1", "1", R"("args": {"correlation": 11})"),
      x_event("kernel", "gemm", "1020.4", "0.5", "0", "7", R"("args": {"stream": 7, "correlation": 11})"),  // 3
      R"({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1030, "s": "t"})",
      x_event("Trace", "PyTorch Profiler (0)", "1000", "500"),                                        // 5
      R"({"ph": "X", "name": "no category", "pid": 1, "tid": 1, "ts": 1040, "dur": 1})",             // 6
      x_event("user_annotation", "ProfilerStep#2", "1200.75", "100"),                                 // 7
      x_event("cuda_runtime", "cudaLaunchKernel", "1210", "5", "1", "1", R"("args": {"correlation": 12})"),
      x_event("kernel", "gemm", "1220", "3", "0", R"("stream 7")", R"("args": {"correlation": 12})"),  // 9
      x_event("Kernel", "relu", "1100.5", "2.25", "0", "7", R"("args": {"stream": 7, "correlation": 11})"),
  });
}

TEST(hta_frame, RoundsDropsLinksAndFiltersToSteps) {
  Loaded l;
  load(l, {two_step_trace()});
  const HtaFrames frames = frames_of(l);
  ASSERT_EQ(frames.ranks.size(), 1u);
  const HtaRankFrame& f = frames.ranks[0];
  EXPECT_TRUE(f.rounded);
  EXPECT_EQ(f.dropped_records, 3);  // the instant, the "Trace" span, the event without cat
  EXPECT_TRUE(frames.step_filter_applied);
  EXPECT_EQ(frames.profiler_steps, (std::vector<std::string>{"1"}));

  // Kept: the GPU-like rows whose launch is before the last step (grouped by
  // correlation), then the host rows before it. The last step, its launch and
  // the kernel whose stream only came from tid (-1 for HTA, so host-like) go.
  std::vector<int64_t> order;
  for (const auto& e : f.events) order.push_back(e.index);
  EXPECT_EQ(order, (std::vector<int64_t>{3, 10, 1, 2}));

  // ts = ceil(ts), end = floor(ts + dur), aligned on the earliest start (1001).
  const HtaEvent* step = find_index(f, 1);
  const HtaEvent* launch = find_index(f, 2);
  const HtaEvent* gemm = find_index(f, 3);
  const HtaEvent* relu = find_index(f, 10);
  ASSERT_TRUE(step && launch && gemm && relu);
  EXPECT_EQ(step->ts, 0);
  EXPECT_EQ(step->dur, 99);
  EXPECT_EQ(launch->ts, 10);
  EXPECT_EQ(launch->dur, 4);
  EXPECT_EQ(gemm->ts, 20);
  EXPECT_EQ(gemm->dur, -1);  // 1020.4 + 0.5 never crosses a whole µs
  EXPECT_EQ(relu->ts, 100);
  EXPECT_EQ(relu->dur, 1);
  EXPECT_EQ(f.negative_durations, 1);

  // The launch points at the last kernel of its correlation, both kernels at the launch.
  EXPECT_EQ(launch->index_correlation, 10);
  EXPECT_EQ(gemm->index_correlation, 2);
  EXPECT_EQ(relu->index_correlation, 2);
  EXPECT_EQ(step->index_correlation, -1);
  EXPECT_EQ(gemm->stream, 7);
  EXPECT_TRUE(gemm->gpu_like);
  EXPECT_FALSE(launch->gpu_like);
  EXPECT_TRUE(gemm->kernel_category);
  EXPECT_TRUE(relu->kernel_category);  // 2021 capitalised "Kernel" counts too
  EXPECT_EQ(gemm->type, HtaKernelType::kComputation);
}

TEST(hta_frame, IntegerTimestampsKeepFractionalDurations) {
  Loaded l;
  load(l, {trace_doc({
      x_event("kernel", "gemm", "500", "2.5", "0", "7", R"("args": {"stream": 7, "correlation": 1})"),
      x_event("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", "510", "1.25", "0", "7",
              R"j("args": {"stream": 7, "correlation": 2, "memory bandwidth (GB/s)": 12.5})j"),
  })});
  const HtaFrames frames = frames_of(l);
  const HtaRankFrame& f = frames.ranks[0];
  EXPECT_FALSE(f.rounded);
  EXPECT_FALSE(frames.step_filter_applied);
  ASSERT_EQ(f.events.size(), 2u);
  EXPECT_EQ(f.events[0].ts, 0);
  EXPECT_EQ(f.events[0].dur, 2.5);
  EXPECT_EQ(f.events[1].ts, 10);
  EXPECT_EQ(f.events[1].dur, 1.25);
  EXPECT_EQ(f.events[1].memory_bw_gbps, 12.5);
  EXPECT_EQ(f.events[1].type, HtaKernelType::kMemory);
  EXPECT_EQ(f.events[0].index_correlation, 0);  // correlated, but no launch in the trace
}

TEST(hta_frame, RoundsEpochTimestampsLikePythonFloats) {
  // Epoch µs with a fraction are above 2^53 ns: HTA rounds Python's float of
  // the text. float("1712195496948774.093") is ...774.0 (ceil ...774), while
  // the nearest double to the int64 ns divided by 1000 is ...774.25 (ceil ...775).
  Loaded l;
  load(l, {trace_doc({
      x_event("kernel", "a", "1712195496948774.093", "1", "0", "7", R"("args": {"stream": 7, "correlation": 1})"),
      x_event("kernel", "b", "1712195496948770.7", "3.5", "0", "7", R"("args": {"stream": 7, "correlation": 2})"),
  })});
  const HtaFrames frames = frames_of(l);
  const HtaRankFrame& f = frames.ranks[0];
  ASSERT_EQ(f.events.size(), 2u);
  // b: float ...770.75 -> ts ...771, end floor(...774.25) = ...774, dur 3; a: ts ...774, dur 1.
  EXPECT_EQ(f.events[1].ts, 0);
  EXPECT_EQ(f.events[1].dur, 3);
  EXPECT_EQ(f.events[0].ts, 3);
  EXPECT_EQ(f.events[0].dur, 1);
}

TEST(hta_frame, RanksAlignTogetherAndDuplicatesKeepTheLastFile) {
  Loaded l;
  load(l, {
      trace_doc({x_event("kernel", "k", "1000", "10", "0", "7", R"("args": {"stream": 7, "correlation": 1})")},
                R"("distributedInfo": {"rank": 1})"),
      trace_doc({x_event("kernel", "k", "900", "10", "0", "7", R"("args": {"stream": 7, "correlation": 1})")}),
      trace_doc({x_event("kernel", "k", "950", "10", "0", "7", R"("args": {"stream": 7, "correlation": 1})")}),
  });
  const HtaFrames frames = frames_of(l);
  // Files 1 and 2 have no distributedInfo: both are rank 0, rank-2.json wins.
  ASSERT_EQ(frames.ranks.size(), 2u);
  EXPECT_EQ(frames.ranks[0].rank, 0);
  EXPECT_EQ(frames.ranks[1].rank, 1);
  EXPECT_EQ(frames.ranks[0].events[0].ts, 0);   // 950 is the earliest kept start
  EXPECT_EQ(frames.ranks[1].events[0].ts, 50);
  ASSERT_EQ(frames.notes.size(), 1u);
  EXPECT_NE(frames.notes[0].find("rank-1.json"), std::string::npos);
}

TEST(hta_frame, SingleStepKeepsEverything) {
  Loaded l;
  load(l, {trace_doc({
      x_event("user_annotation", "ProfilerStep#7", "100", "50"),
      x_event("cuda_runtime", "cudaLaunchKernel", "110", "5", "1", "1", R"("args": {"correlation": 3})"),
      x_event("kernel", "k", "120", "10", "0", "7", R"("args": {"stream": 7, "correlation": 3})"),
  })});
  const HtaFrames frames = frames_of(l);
  EXPECT_FALSE(frames.step_filter_applied);
  EXPECT_EQ(frames.ranks[0].events.size(), 3u);
  EXPECT_EQ(frames.profiler_steps, (std::vector<std::string>{"7"}));
}

}  // namespace
}  // namespace stepscope::analysis::hta
