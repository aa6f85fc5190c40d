// Gzip input: multi-member files (pigz, concatenated dumps) read whole, and
// the two decoders (ISA-L igzip, zlib) give byte-for-byte the same store.
#include <gtest/gtest.h>

#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

using testing::TempDir;

void expect_same_store(const EventStore& a, const EventStore& b) {
  ASSERT_EQ(a.events.size(), b.events.size());
  EXPECT_EQ(a.events.ts_ns, b.events.ts_ns);
  EXPECT_EQ(a.events.dur_ns, b.events.dur_ns);
  EXPECT_EQ(a.events.name, b.events.name);
  EXPECT_EQ(a.events.kind, b.events.kind);
  EXPECT_EQ(a.events.pid, b.events.pid);
  EXPECT_EQ(a.events.tid, b.events.tid);
  EXPECT_EQ(a.events.stream, b.events.stream);
  EXPECT_EQ(a.events.correlation, b.events.correlation);
  EXPECT_EQ(a.events.external_id, b.events.external_id);
  EXPECT_EQ(a.events.args_begin, b.events.args_begin);
  EXPECT_EQ(a.events.args_count, b.events.args_count);
  EXPECT_EQ(a.args.key, b.args.key);
  EXPECT_EQ(a.args.value, b.args.value);
  EXPECT_EQ(a.flows.id, b.flows.id);
  EXPECT_EQ(a.strings.size(), b.strings.size());
  EXPECT_EQ(a.launch_of_gpu, b.launch_of_gpu);
  EXPECT_EQ(a.cpu_op_of_gpu, b.cpu_op_of_gpu);
  EXPECT_EQ(a.meta.base_time_ns, b.meta.base_time_ns);
  for (size_t c = 0; c < static_cast<size_t>(ImportCounter::kCount); ++c)
    EXPECT_EQ(a.stats.count(static_cast<ImportCounter>(c)), b.stats.count(static_cast<ImportCounter>(c)));
}

class Backends : public ::testing::TestWithParam<GzipBackend> {};

TEST_P(Backends, MultiMemberGzipIsReadWhole) {
  TempDir dir;
  std::string doc = testing::trace_doc(testing::cpu_ops(3000));
  // Three members cut at arbitrary places, even inside a record.
  size_t a = doc.size() / 3 + 7, b = 2 * doc.size() / 3 + 3;
  std::string gz = testing::gzip(doc.substr(0, a)) + testing::gzip(doc.substr(a, b - a), 1) +
                   testing::gzip(doc.substr(b), 9);
  std::string path = dir.write("multi.json.gz", gz);
  EventStore s;
  ReadOutcome out = testing::read(path, s, false, GetParam());
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(out.uncompressed_bytes, doc.size());
  EXPECT_EQ(out.file_bytes, gz.size());
  ASSERT_EQ(s.events.size(), 3000u);
  EXPECT_EQ(s.name_of(2999), "aten::op2999");

  EventStore plain;
  ASSERT_TRUE(testing::read(dir.write("plain.json", doc), plain).ok);
  expect_same_store(s, plain);
}

TEST_P(Backends, GzipIsRecognisedByMagicNotName) {
  TempDir dir;
  std::string doc = testing::trace_doc(testing::cpu_ops(10));
  EventStore s;
  ReadOutcome out = testing::read(dir.write("looks_plain.json", testing::gzip(doc)), s, false, GetParam());
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(s.events.size(), 10u);
  EventStore p;
  out = testing::read(dir.write("looks_gz.json.gz", doc), p, false, GetParam());
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(p.events.size(), 10u);
}

TEST_P(Backends, TrailingGarbageAfterGzipMemberIsAnError) {
  TempDir dir;
  std::string gz = testing::gzip(testing::trace_doc(testing::cpu_ops(10))) + "not gzip";
  std::string path = dir.write("t.json.gz", gz);
  EventStore s;
  ReadOutcome out = testing::read(path, s, false, GetParam());
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error.rfind(path + ": ", 0), 0u) << out.error;
  EXPECT_NE(out.error.find("gzip"), std::string::npos) << out.error;
}

// Zero bytes after the last member (tape and block-device copies pad so;
// gzip -t and Python's gzip accept them) end the file; more than one input
// chunk (256 KiB) of them too, and after several members.
TEST_P(Backends, TrailingZeroPaddingIsAccepted) {
  TempDir dir;
  const std::string doc = testing::trace_doc(testing::cpu_ops(100));
  const size_t half = doc.size() / 2;
  for (size_t zeros : {size_t{1}, size_t{512}, size_t{600} << 10}) {
    SCOPED_TRACE(zeros);
    for (const std::string& gz : {testing::gzip(doc), testing::gzip(doc.substr(0, half)) + testing::gzip(doc.substr(half))}) {
      const std::string path = dir.write("padded.json.gz", gz + std::string(zeros, '\0'));
      EventStore s;
      ReadOutcome out = testing::read(path, s, false, GetParam());
      ASSERT_TRUE(out.ok) << out.error;
      EXPECT_EQ(s.events.size(), 100u);
      EXPECT_EQ(out.uncompressed_bytes, doc.size());
    }
  }
}

// A non-zero byte after the zero padding is not padding: an error naming the
// file and the compressed byte offset of that byte.
TEST_P(Backends, NonZeroByteAfterZeroPaddingIsAnError) {
  TempDir dir;
  const std::string gz = testing::gzip(testing::trace_doc(testing::cpu_ops(10)));
  const std::string path = dir.write("t.json.gz", gz + std::string(100, '\0') + "x");
  EventStore s;
  ReadOutcome out = testing::read(path, s, false, GetParam());
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error, path + ": non-zero byte after the zero padding that follows the last gzip member at compressed byte " +
                           std::to_string(gz.size() + 100));
}

INSTANTIATE_TEST_SUITE_P(Gzip, Backends, ::testing::Values(GzipBackend::kIsal, GzipBackend::kZlib),
                         [](const auto& info) { return info.param == GzipBackend::kIsal ? "isal" : "zlib"; });

class RealTraces : public ::testing::TestWithParam<const char*> {};

TEST_P(RealTraces, BothBackendsGiveIdenticalStores) {
  SKIP_WITHOUT_SHARED();
  std::string path = testing::shared_trace(GetParam());
  ASSERT_FALSE(path.empty());
  EventStore isal, zlib;
  ReadOutcome a = testing::read(path, isal, false, GzipBackend::kIsal);
  ReadOutcome b = testing::read(path, zlib, false, GzipBackend::kZlib);
  ASSERT_TRUE(a.ok) << a.error;
  ASSERT_TRUE(b.ok) << b.error;
  EXPECT_EQ(a.uncompressed_bytes, b.uncompressed_bytes);
  EXPECT_EQ(a.uncompressed_bytes, testing::gunzip_file(path).size());
  EXPECT_GT(isal.events.size(), 0u);
  expect_same_store(isal, zlib);
}

INSTANTIATE_TEST_SUITE_P(Shared, RealTraces,
                         ::testing::Values("conformance/hta/critical_path_simple_add",
                                           "conformance/hta/amd_trace", "conformance/param/dlrm_8rank",
                                           "traces/h200/gpt_baseline_bf16"),
                         [](const auto& info) {
                           std::string s = info.param;
                           s = s.substr(s.rfind('/') + 1);
                           for (char& c : s)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

}  // namespace
}  // namespace stepscope::trace
