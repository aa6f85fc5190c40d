// ProfilerStep#N is the step whatever host category wrote it: PyTorch 1.8-1.9
// wrote record_function ranges with category "Operator" (as ops), later
// releases "user_annotation". The device's copy (gpu_user_annotation) is not a
// host step. Checked on a synthetic trace shaped as PyTorch 1.8 wrote it and on
// an excerpt of a real PyTorch 1.8 trace (tests/data/wild/pytorch_1_8_resnet50).
#include <gtest/gtest.h>

#include "test_paths.h"
#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

using testing::TempDir;
using testing::trace_doc;
using testing::x_event;

std::vector<std::string> names_of(const EventStore& s, const std::vector<uint32_t>& rows) {
  std::vector<std::string> out;
  for (uint32_t r : rows) out.emplace_back(s.name_of(r));
  return out;
}

TEST(ProfilerStepCategory, StepsInEveryHostCategoryButNotOnTheDevice) {
  // Categories as PyTorch 1.8 wrote them (capitalised; tid "stream 7" on the
  // device), plus a step in today's user_annotation, one in cpu_op and one in
  // a category no profiler uses.
  TempDir dir;
  EventStore s;
  std::string path = dir.write(
      "w.json",
      trace_doc({
          x_event("Operator", "ProfilerStep#1", "100", "100", "7", "7", R"("args": {"External id": 1})"),
          x_event("Operator", "aten::conv2d", "110", "20", "7", "7", R"("args": {"External id": 2})"),
          x_event("Runtime", "cudaLaunchKernel", "115", "5", "7", "7", R"("args": {"correlation": 9, "external id": 2})"),
          x_event("Kernel", "volta_sgemm_128x64_nn", "130", "10", "0", "\"stream 7\"",
                  R"("args": {"device": 0, "stream": 7, "correlation": 9})"),
          x_event("Memcpy", "Memcpy HtoD (Pageable -> Device)", "150", "5", "0", "\"stream 7\"",
                  R"("args": {"device": 0, "stream": 7})"),
          x_event("Memset", "Memset (Device)", "160", "1", "0", "\"stream 7\"", R"("args": {"device": 0, "stream": 7})"),
          x_event("user_annotation", "ProfilerStep#2", "200", "100", "7", "7"),
          x_event("gpu_user_annotation", "ProfilerStep#2", "210", "80", "0", "7", R"("args": {"device": 0, "stream": 7})"),
          x_event("cpu_op", "ProfilerStep#3", "300", "100", "7", "7"),
          x_event("some_tool", "ProfilerStep#4", "400", "100", "7", "7"),
      }));
  ASSERT_TRUE(testing::read(path, s).ok);
  EXPECT_EQ(names_of(s, s.step_rows),
            (std::vector<std::string>{"ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"}));
  for (uint32_t r : s.step_rows) EXPECT_EQ(s.events.kind[r], EventKind::kUserAnnotation) << s.name_of(r);
  // A step is not an op: the op list holds the conv only.
  EXPECT_EQ(names_of(s, s.cpu_op_rows), (std::vector<std::string>{"aten::conv2d"}));
  // The 2021 categories are the runtime call, the kernel, the copy and the memset.
  EXPECT_EQ(names_of(s, s.runtime_rows), (std::vector<std::string>{"cudaLaunchKernel"}));
  ASSERT_EQ(s.gpu_rows.size(), 3u);
  EXPECT_EQ(s.events.kind[s.gpu_rows[0]], EventKind::kKernel);
  EXPECT_EQ(s.events.kind[s.gpu_rows[1]], EventKind::kMemcpy);
  EXPECT_EQ(s.events.kind[s.gpu_rows[2]], EventKind::kMemset);
  EXPECT_EQ(s.events.stream[s.gpu_rows[0]], 7);
  EXPECT_EQ(s.launch_of_gpu[0], s.runtime_rows[0]);
  // The category as written is kept.
  EXPECT_EQ(s.strings.get(s.events.category[s.step_rows[0]]), "Operator");
}

TEST(ProfilerStepCategory, ClassifyCategoryByName) {
  EXPECT_EQ(classify_category("Operator", "ProfilerStep#7", 'X'), EventKind::kUserAnnotation);
  EXPECT_EQ(classify_category("Operator", "aten::mm", 'X'), EventKind::kCpuOp);
  EXPECT_EQ(classify_category("Operator", "Optimizer.step#SGD.step", 'X'), EventKind::kCpuOp);
  EXPECT_EQ(classify_category("gpu_user_annotation", "ProfilerStep#7", 'X'), EventKind::kGpuUserAnnotation);
  EXPECT_EQ(classify_category("Kernel", "ProfilerStep#7", 'X'), EventKind::kKernel);
  EXPECT_EQ(classify_category("Runtime", "ProfilerStep#7", 'X'), EventKind::kRuntime);
  EXPECT_EQ(classify_category("Operator", "ProfilerStep#7", 'i'), EventKind::kInstant);
}

TEST(ProfilerStepCategory, RealPyTorch18TraceHasItsSixSteps) {
  EventStore s;
  ReadOutcome out =
      testing::read(testing::test_data_dir() + "/wild/pytorch_1_8_resnet50/worker0.pt.trace.json", s);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(s.stats.skipped_records(), 0u);
  EXPECT_EQ(names_of(s, s.step_rows),
            (std::vector<std::string>{"ProfilerStep#5", "ProfilerStep#6", "ProfilerStep#7", "ProfilerStep#8",
                                      "ProfilerStep#9", "ProfilerStep#10"}));
  // Durations as written ("dur" in µs).
  std::vector<int64_t> dur;
  for (uint32_t r : s.step_rows) dur.push_back(s.events.dur_ns[r]);
  EXPECT_EQ(dur, (std::vector<int64_t>{176078000, 173992000, 176918000, 181259000, 176468000, 164261000}));
  // Every kernel, the copy and the memset are GPU work, each joined to its launch.
  EXPECT_EQ(s.gpu_rows.size(), 14u);
  EXPECT_EQ(s.runtime_rows.size(), 14u);
  for (size_t g = 0; g < s.gpu_rows.size(); ++g) EXPECT_NE(s.launch_of_gpu[g], EventStore::kNoRow) << g;
  // Ops: one per step around the first launch, and the DataLoader, zero_grad
  // and optimizer-step ranges.
  EXPECT_EQ(s.cpu_op_rows.size(), 24u);
}

}  // namespace
}  // namespace stepscope::trace
