// Which GPU stream a device row runs on, across trace generations: 2021
// traces name it only in the tid ("stream 7"), later ones in args.stream,
// HIP as a hex string. Numbers are kept as written (CUDA's 4294967295 for
// context-wide syncs included); host rows keep only a numeric args.stream.
#include <gtest/gtest.h>

#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

using testing::TempDir;
using testing::trace_doc;
using testing::x_event;

EventStore load(const std::vector<std::string>& events) {
  TempDir dir;
  EventStore store;
  ReadOutcome out = testing::read(dir.write("t.json", trace_doc(events)), store);
  EXPECT_TRUE(out.ok) << out.error;
  return store;
}

TEST(GpuStream, From2021TidString) {
  // The 2021 shape: categories "Runtime"/"Kernel"/"Memcpy", no args.stream.
  EventStore s = load({
      x_event("Runtime", "cudaLaunchKernel", "100", "5", "12", "34", R"("args": {"correlation": 7001})"),
      x_event("Kernel", "volta_sgemm", "110", "80", "0", "\"stream 7\"", R"("args": {"correlation": 7001})"),
      x_event("Memcpy", "Memcpy HtoD", "200", "3", "0", "\"stream 13\""),
  });
  ASSERT_EQ(s.events.size(), 3u);
  EXPECT_EQ(s.events.kind[0], EventKind::kRuntime);
  EXPECT_EQ(s.events.kind[1], EventKind::kKernel);
  EXPECT_EQ(s.events.kind[2], EventKind::kMemcpy);
  EXPECT_EQ(s.events.stream[0], kNone);
  EXPECT_EQ(s.events.stream[1], 7);
  EXPECT_EQ(s.events.tid[1], 7);
  EXPECT_TRUE(s.events.flags[1] & kStreamFromTid);
  EXPECT_EQ(s.events.stream[2], 13);
  EXPECT_TRUE(s.events.flags[2] & kStreamFromTid);
  ASSERT_EQ(s.gpu_rows.size(), 2u);
  EXPECT_EQ(s.launch_of_gpu[0], 0u);
  EXPECT_EQ(s.launch_of_gpu[1], EventStore::kNoRow);  // memcpy without correlation
}

TEST(GpuStream, FromArgsStreamWinsOverTid) {
  EventStore s = load({
      x_event("kernel", "k", "10", "1", "0", "7", R"("args": {"stream": 20, "device": 0})"),
      x_event("gpu_memset", "Memset (Device)", "11", "1", "0", "7", R"("args": {"stream": 7})"),
  });
  ASSERT_EQ(s.events.size(), 2u);
  EXPECT_EQ(s.events.stream[0], 20);
  EXPECT_FALSE(s.events.flags[0] & kStreamFromTid);
  EXPECT_EQ(s.events.device[0], 0);
  EXPECT_EQ(s.events.stream[1], 7);
  EXPECT_EQ(s.events.kind[1], EventKind::kMemset);
}

TEST(GpuStream, HexAndSentinelValues) {
  EventStore s = load({
      x_event("kernel", "hip", "10", "1", "0", "0", R"("args": {"stream": "0x0"})"),
      x_event("kernel", "hip2", "11", "1", "0", "0", R"("args": {"stream": "0x1A"})"),
      x_event("cuda_sync", "Context Sync", "12", "1", "0", "5", R"("args": {"stream": 4294967295})"),
  });
  ASSERT_EQ(s.events.size(), 3u);
  EXPECT_EQ(s.events.stream[0], 0);
  EXPECT_EQ(s.events.stream[1], 26);
  EXPECT_EQ(s.events.stream[2], 4294967295);  // as written, as HTA keeps it
  EXPECT_EQ(s.events.kind[2], EventKind::kGpuSync);
}

TEST(GpuStream, HostRowsKeepOnlyNumericStreams) {
  EventStore s = load({
      x_event("cuda_runtime", "cudaStreamSynchronize", "10", "1", "1", "2", R"("args": {"stream": 3})"),
      x_event("cuda_runtime", "hipLaunchKernel", "11", "1", "1", "2", R"("args": {"stream": "0x0"})"),
      x_event("cpu_op", "aten::mm", "12", "1", "1", "2"),
  });
  ASSERT_EQ(s.events.size(), 3u);
  EXPECT_EQ(s.events.stream[0], 3);
  EXPECT_EQ(s.events.stream[1], kNone);  // a HIP queue handle, not a row's stream
  EXPECT_EQ(s.events.stream[2], kNone);
}

TEST(GpuStream, RealAmdTraceHexStreams) {
  SKIP_WITHOUT_SHARED();
  std::string path = testing::shared_trace("conformance/hta/amd_trace");
  std::string text = testing::gunzip_file(path);
  EventStore s;
  ReadOutcome out = testing::read(path, s);
  ASSERT_TRUE(out.ok) << out.error;
  // The file writes "stream": "0x0" on HIP runtime calls and 0 on kernels.
  ASSERT_NE(text.find("\"stream\": \"0x0\""), std::string::npos);
  ASSERT_FALSE(s.gpu_rows.empty());
  for (size_t g = 0; g < s.gpu_rows.size(); ++g) {
    uint32_t r = s.gpu_rows[g];
    EXPECT_EQ(s.events.stream[r], 0) << s.name_of(r);
    if (s.events.kind[r] == EventKind::kKernel) {
      // Every kernel finds its HIP launch, whose args carry the hex stream.
      ASSERT_NE(s.launch_of_gpu[g], EventStore::kNoRow) << s.name_of(r);
      EXPECT_EQ(s.events.correlation[s.launch_of_gpu[g]], s.events.correlation[r]);
    }
  }
  EXPECT_EQ(s.stats.count(ImportCounter::kUnparsedId), 0u);
  EXPECT_EQ(s.stats.skipped_records(), 0u);
}

}  // namespace
}  // namespace stepscope::trace
