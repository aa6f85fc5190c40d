// The joins built at import, checked on real traces against what the JSON
// text says: launch -> kernel through correlation, GPU work -> CPU op through
// External id, and ProfilerStep#N step rows.
#include <gtest/gtest.h>

#include <set>

#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

using testing::TempDir;
using testing::trace_doc;
using testing::x_event;

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(StoreIndexes, EveryKernelHasItsLaunchOnARealTrace) {
  SKIP_WITHOUT_SHARED();
  std::string path = testing::shared_trace("conformance/hta/critical_path_simple_add");
  std::string text = testing::gunzip_file(path);
  EventStore s;
  ReadOutcome out = testing::read(path, s);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(s.stats.skipped_records(), 0u);

  size_t kernels = 0;
  for (size_t g = 0; g < s.gpu_rows.size(); ++g) {
    uint32_t k = s.gpu_rows[g];
    if (s.events.kind[k] != EventKind::kKernel) continue;
    ++kernels;
    uint32_t launch = s.launch_of_gpu[g];
    ASSERT_NE(launch, EventStore::kNoRow) << "kernel without launch: " << s.name_of(k);
    EXPECT_EQ(s.events.kind[launch], EventKind::kRuntime);
    EXPECT_EQ(s.events.correlation[launch], s.events.correlation[k]);
    EXPECT_NE(s.name_of(launch).find("Launch"), std::string_view::npos) << s.name_of(launch);
    EXPECT_LE(s.events.ts_ns[launch], s.events.ts_ns[k]);  // a kernel starts after its launch
  }
  EXPECT_EQ(kernels, count_of(text, "\"cat\": \"kernel\""));
  EXPECT_EQ(s.gpu_rows.size(), count_of(text, "\"cat\": \"kernel\"") + count_of(text, "\"cat\": \"gpu_memcpy\"") +
                                   count_of(text, "\"cat\": \"gpu_memset\""));
  EXPECT_EQ(s.meta.rank, 0);
}

// GPU work -> CPU op goes through External id, but traces of 2021-2023 give
// GPU rows an External id equal to their correlation, which can collide with
// an unrelated op's id. A join is kept only if the op encloses the launch.
struct OpJoinCase {
  const char* folder;
  double min_joined;  // fraction of launched GPU rows that must find their op
};

void PrintTo(const OpJoinCase& c, std::ostream* os) { *os << c.folder; }

class OpJoin : public ::testing::TestWithParam<OpJoinCase> {};

TEST_P(OpJoin, EveryJoinedOpEnclosesTheLaunch) {
  SKIP_WITHOUT_SHARED();
  EventStore s;
  ASSERT_TRUE(testing::read(testing::shared_trace(GetParam().folder), s).ok);
  size_t launched = 0, joined = 0;
  for (size_t g = 0; g < s.gpu_rows.size(); ++g) {
    uint32_t launch = s.launch_of_gpu[g];
    if (launch == EventStore::kNoRow) continue;
    ++launched;
    uint32_t op = s.cpu_op_of_gpu[g];
    if (op == EventStore::kNoRow) continue;
    ++joined;
    uint32_t k = s.gpu_rows[g];
    EXPECT_EQ(s.events.kind[op], EventKind::kCpuOp);
    int64_t ext = s.events.external_id[k] != kNone ? s.events.external_id[k] : s.events.external_id[launch];
    EXPECT_EQ(s.events.external_id[op], ext);
    EXPECT_EQ(s.events.tid[op], s.events.tid[launch]);
    EXPECT_GE(s.events.ts_ns[launch], s.events.ts_ns[op]) << s.name_of(op) << " / " << s.name_of(k);
    EXPECT_LE(s.events.ts_ns[launch], s.events.ts_ns[op] + s.events.dur_ns[op]) << s.name_of(op);
  }
  ASSERT_GT(launched, 0u);
  EXPECT_GE(static_cast<double>(joined), GetParam().min_joined * static_cast<double>(launched))
      << joined << " of " << launched;
}

INSTANTIATE_TEST_SUITE_P(Shared, OpJoin,
                         ::testing::Values(
                             // 2023 format: External ids of GPU rows collide with op ids.
                             OpJoinCase{"conformance/hta/critical_path_simple_add", 0.0},
                             OpJoinCase{"conformance/param/linear", 0.0},
                             // PyTorch 2.x: ops and launches share External ids.
                             OpJoinCase{"conformance/hta/ns_resolution_trace", 0.95},
                             OpJoinCase{"traces/h200/gpt_baseline_bf16", 0.8}),
                         [](const auto& info) {
                           std::string s = info.param.folder;
                           return s.substr(s.rfind('/') + 1);
                         });

TEST(StoreIndexes, ProfilerStepRowsOnARealTrace) {
  SKIP_WITHOUT_SHARED();
  std::string path = testing::shared_trace("traces/h200/gpt_baseline_bf16");
  std::string text = testing::gunzip_file(path);
  EventStore s;
  ASSERT_TRUE(testing::read(path, s).ok);
  size_t host_steps = count_of(text, "\"cat\": \"user_annotation\", \"name\": \"ProfilerStep#");
  ASSERT_GT(host_steps, 1u);
  ASSERT_EQ(s.step_rows.size(), host_steps);  // the gpu_user_annotation copies are not steps
  for (size_t i = 0; i < s.step_rows.size(); ++i) {
    uint32_t r = s.step_rows[i];
    EXPECT_EQ(s.events.kind[r], EventKind::kUserAnnotation);
    EXPECT_EQ(s.name_of(r), "ProfilerStep#" + std::to_string(i + 1));
    if (i > 0) {
      uint32_t prev = s.step_rows[i - 1];
      EXPECT_LE(s.events.ts_ns[prev] + s.events.dur_ns[prev], s.events.ts_ns[r]);
    }
  }
}

TEST(StoreIndexes, JoinsOnASmallHandWrittenTrace) {
  TempDir dir;
  std::string path = dir.write(
      "t.json",
      trace_doc({
          x_event("user_annotation", "ProfilerStep#7", "0", "100"),
          x_event("cpu_op", "aten::mm", "10", "30", "1", "1", R"("args": {"External id": 5})"),
          x_event("cuda_runtime", "cudaLaunchKernel", "20", "5", "1", "1",
                  R"("args": {"External id": 5, "correlation": 99})"),
          // The kernel names no External id: it is found through its launch.
          x_event("kernel", "gemm", "40", "10", "0", "7", R"("args": {"correlation": 99, "stream": 7})"),
          x_event("kernel", "orphan", "60", "10", "0", "7", R"("args": {"correlation": 100, "stream": 7})"),
          x_event("gpu_user_annotation", "ProfilerStep#7", "40", "40", "0", "7"),
      }));
  EventStore s;
  ASSERT_TRUE(testing::read(path, s).ok);
  ASSERT_EQ(s.step_rows.size(), 1u);
  EXPECT_EQ(s.name_of(s.step_rows[0]), "ProfilerStep#7");
  ASSERT_EQ(s.gpu_rows.size(), 2u);
  EXPECT_EQ(s.name_of(s.gpu_rows[0]), "gemm");
  EXPECT_EQ(s.name_of(s.launch_of_gpu[0]), "cudaLaunchKernel");
  EXPECT_EQ(s.name_of(s.cpu_op_of_gpu[0]), "aten::mm");
  EXPECT_EQ(s.launch_of_gpu[1], EventStore::kNoRow);
  EXPECT_EQ(s.cpu_op_of_gpu[1], EventStore::kNoRow);
  ASSERT_EQ(s.runtime_rows.size(), 1u);
  ASSERT_EQ(s.cpu_op_rows.size(), 1u);
}

TEST(StoreIndexes, OutOfOrderEventsAreSortedWithTheirArgs) {
  TempDir dir;
  std::string path = dir.write(
      "t.json", trace_doc({
                    x_event("cpu_op", "late", "30", "1", "1", "1", R"("args": {"Sequence number": 3})"),
                    x_event("cpu_op", "early", "10", "1", "1", "1", R"("args": {"Sequence number": 1})"),
                    x_event("cpu_op", "mid", "20", "1"),
                }));
  EventStore s;
  ASSERT_TRUE(testing::read(path, s).ok);
  ASSERT_EQ(s.events.size(), 3u);
  StringId seq = s.strings.find("Sequence number");
  EXPECT_EQ(s.name_of(0), "early");
  EXPECT_EQ(s.arg_int(0, seq), 1);
  EXPECT_EQ(s.name_of(1), "mid");
  EXPECT_EQ(s.arg_int(1, seq), std::nullopt);
  EXPECT_EQ(s.name_of(2), "late");
  EXPECT_EQ(s.arg_int(2, seq), 3);
}

}  // namespace
}  // namespace stepscope::trace
