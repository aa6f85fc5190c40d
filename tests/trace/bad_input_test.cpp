// Damaged and hostile input: each case asserts the exact outcome the reader
// promises (a one-line error naming the file and where it broke, or counted
// warnings with the good events kept), never just "did not crash".
#include <gtest/gtest.h>

#include <random>

#include "trace/trace_set.h"
#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

using testing::TempDir;
using testing::cpu_ops;
using testing::gzip;
using testing::trace_doc;
using testing::x_event;

bool one_line(const std::string& s) { return !s.empty() && s.find('\n') == std::string::npos; }

// Reads `text` written as NAME.json and as NAME.json.gz (what is read must not
// depend on the compression); `check` gets each store.
template <class Check>
void read_plain_and_gzip(const TempDir& dir, const std::string& name, const std::string& text, Check check) {
  for (bool gz : {false, true}) {
    SCOPED_TRACE(gz ? "gzip" : "plain");
    std::string path = gz ? dir.write(name + ".json.gz", gzip(text)) : dir.write(name + ".json", text);
    EventStore store;
    ReadOutcome out = testing::read(path, store);
    ASSERT_TRUE(out.ok) << out.error;
    check(store);
  }
}

// Cuts `doc` in the middle of the text of event `k` (its first 10 bytes stay).
std::string cut_inside_event(const std::string& doc, int k) {
  size_t at = doc.find("\"aten::op" + std::to_string(k) + "\"");
  EXPECT_NE(at, std::string::npos);
  return doc.substr(0, at + 4);
}

TEST(BadInput, TruncatedPlainFileNamesFileAndByteOffset) {
  TempDir dir;
  std::string cut = cut_inside_event(trace_doc(cpu_ops(100)), 50);
  std::string path = dir.write("rank0.json", cut);
  EventStore store;
  ReadOutcome out = testing::read(path, store);
  EXPECT_FALSE(out.ok);
  EXPECT_FALSE(out.salvaged);
  EXPECT_TRUE(one_line(out.error)) << out.error;
  EXPECT_EQ(out.error.rfind(path + ": ", 0), 0u) << out.error;
  EXPECT_NE(out.error.find("truncated"), std::string::npos) << out.error;
  EXPECT_NE(out.error.find("at byte " + std::to_string(cut.size())), std::string::npos) << out.error;
  // and where the cut record began
  EXPECT_NE(out.error.find("record that starts at byte " + std::to_string(cut.rfind('{'))), std::string::npos)
      << out.error;
}

// An odd number of unescaped quotes in one record makes every later string
// boundary wrong, so the input seems to end inside a record: the error names
// the record where that began, which is where the quote is.
TEST(BadInput, UnescapedQuoteIsLocatedByItsRecord) {
  TempDir dir;
  std::string text = trace_doc({x_event("cpu_op", "a", "10", "1"), x_event("cpu_op", "odd\"quote", "12", "1"),
                                x_event("cpu_op", "b", "14", "1")});
  std::string path = dir.write("q.json", text);
  EventStore store;
  ReadOutcome out = testing::read(path, store);
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(one_line(out.error)) << out.error;
  const size_t record = text.rfind('{', text.find("odd\""));
  EXPECT_NE(out.error.find("record that starts at byte " + std::to_string(record) + " "), std::string::npos)
      << out.error;
  EXPECT_NE(out.error.find("unescaped"), std::string::npos) << out.error;
}

TEST(BadInput, TruncatedPlainFileSalvageKeepsEventsBeforeTheCut) {
  TempDir dir;
  std::string cut = cut_inside_event(trace_doc(cpu_ops(100)), 50);
  std::string path = dir.write("rank0.json", cut);
  EventStore store;
  ReadOutcome out = testing::read(path, store, /*salvage=*/true);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_TRUE(out.salvaged);
  ASSERT_EQ(store.events.size(), 50u);  // events 0..49 are whole; 50 is cut
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_EQ(store.name_of(i), "aten::op" + std::to_string(i));
    EXPECT_EQ(store.events.ts_ns[i], (1000 + 10 * static_cast<int64_t>(i)) * 1000);
  }
  EXPECT_EQ(store.stats.count(ImportCounter::kTruncatedInput), 1u);
  ASSERT_EQ(store.stats.log().size(), 1u);
  EXPECT_EQ(store.stats.log()[0].counter, ImportCounter::kTruncatedInput);
  EXPECT_EQ(store.stats.log()[0].byte_offset, cut.size());
  EXPECT_EQ(store.stats.skipped_records(), 0u);  // the cut is not a skipped record
}

TEST(BadInput, TruncatedInsideHeaderIsFatalEvenWithSalvage) {
  TempDir dir;
  std::string doc = trace_doc(cpu_ops(3), R"("distributedInfo": {"rank": 0})");
  std::string path = dir.write("t.json", doc.substr(0, doc.find("distributedInfo") + 20));
  EventStore store;
  ReadOutcome out = testing::read(path, store, true);
  EXPECT_FALSE(out.ok);  // nothing to salvage: no event was read
  EXPECT_NE(out.error.find("truncated"), std::string::npos) << out.error;
  EXPECT_TRUE(one_line(out.error));
}

class GzipBackends : public ::testing::TestWithParam<GzipBackend> {};

TEST_P(GzipBackends, TruncatedGzipIsAnErrorAndSalvagesAPrefix) {
  TempDir dir;
  const int n = 4000;
  std::string gz = gzip(trace_doc(cpu_ops(n)));
  std::string path = dir.write("rank0.json.gz", gz.substr(0, gz.size() / 2));

  EventStore failed;
  ReadOutcome out = testing::read(path, failed, false, GetParam());
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(one_line(out.error)) << out.error;
  EXPECT_EQ(out.error.rfind(path + ": ", 0), 0u) << out.error;
  EXPECT_NE(out.error.find("truncated gzip"), std::string::npos) << out.error;
  EXPECT_NE(out.error.find("at compressed byte " + std::to_string(gz.size() / 2)), std::string::npos)
      << out.error;

  EventStore store;
  out = testing::read(path, store, true, GetParam());
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_TRUE(out.salvaged);
  // Half the compressed bytes hold roughly half the events; whatever was
  // decoded must be exactly the leading events, in order.
  EXPECT_GT(store.events.size(), static_cast<size_t>(n / 4));
  EXPECT_LT(store.events.size(), static_cast<size_t>(n));
  for (size_t i = 0; i < store.events.size(); ++i)
    ASSERT_EQ(store.name_of(i), "aten::op" + std::to_string(i));
  EXPECT_EQ(store.stats.count(ImportCounter::kTruncatedInput), 1u);
}

TEST_P(GzipBackends, CorruptGzipDataIsAnErrorNamingTheFile) {
  TempDir dir;
  std::string gz = gzip(trace_doc(cpu_ops(4000)));
  for (size_t i = gz.size() / 2; i < gz.size() / 2 + 64; ++i) gz[i] = static_cast<char>(gz[i] ^ 0x5a);
  std::string path = dir.write("rank0.json.gz", gz);
  EventStore store;
  ReadOutcome out = testing::read(path, store, false, GetParam());
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(one_line(out.error)) << out.error;
  EXPECT_EQ(out.error.rfind(path + ": ", 0), 0u) << out.error;
  // Either the deflate stream breaks or, if the damage happens to decode, the
  // JSON or the checksum does; all of them name the file.
  EXPECT_TRUE(out.error.find("gzip") != std::string::npos || out.error.find("byte") != std::string::npos)
      << out.error;
}

INSTANTIATE_TEST_SUITE_P(Backends, GzipBackends, ::testing::Values(GzipBackend::kIsal, GzipBackend::kZlib),
                         [](const auto& info) { return info.param == GzipBackend::kIsal ? "isal" : "zlib"; });

TEST(BadInput, RandomBytesAreRejectedWithOneLine) {
  TempDir dir;
  std::mt19937 rng(20240601);
  std::string bytes(64 << 10, '\0');
  for (auto& c : bytes) c = static_cast<char>(rng() & 0xff);
  ASSERT_FALSE(bytes[0] == '\x1f' && bytes[1] == '\x8b');
  std::string path = dir.write("noise.json", bytes);
  for (bool salvage : {false, true}) {
    EventStore store;
    ReadOutcome out = testing::read(path, store, salvage);
    EXPECT_FALSE(out.ok);
    EXPECT_FALSE(out.not_a_trace);
    EXPECT_TRUE(one_line(out.error)) << out.error;
    EXPECT_EQ(out.error, path + ": not a JSON trace: expected '{' or '[' at the start at byte 0");
  }
}

TEST(BadInput, RandomBytesInsideTraceEventsStopAtTheFirstBadByte) {
  TempDir dir;
  std::mt19937 rng(7);
  std::string noise(4096, '\0');
  for (auto& c : noise) c = static_cast<char>(rng() & 0xff);
  std::string head = "{\"traceEvents\": [" + x_event("cpu_op", "good", "1", "1") + ", ";
  std::string path = dir.write("t.json", head + "#" + noise);
  EventStore store;
  ReadOutcome out = testing::read(path, store);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error, path + ": unexpected character '#' at byte " + std::to_string(head.size()));
  EventStore salvaged;
  out = testing::read(path, salvaged, true);
  ASSERT_TRUE(out.ok);
  ASSERT_EQ(salvaged.events.size(), 1u);
  EXPECT_EQ(salvaged.name_of(0), "good");
}

TEST(BadInput, EmptyFile) {
  TempDir dir;
  std::string path = dir.write("empty.json", "");
  EventStore store;
  ReadOutcome out = testing::read(path, store, true);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error, path + ": empty file (no JSON value) at byte 0");
  std::string ws = dir.write("blank.json", " \n\t\n");
  out = testing::read(ws, store);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error, ws + ": empty file (no JSON value) at byte 0");
}

TEST(BadInput, EmptyFolder) {
  TempDir dir;
  std::string folder = dir.file("traces");
  std::filesystem::create_directory(folder);
  LoadResult r = load_traces({folder}, ReadOptions{});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, folder + ": folder holds no .json or .json.gz files");
  EXPECT_TRUE(r.set.ranks.empty());
}

TEST(BadInput, ObjectWithoutTraceEventsIsNotATrace) {
  TempDir dir;
  std::string path = dir.write("config.json", R"({"a": 1})");
  EventStore store;
  ReadOutcome out = testing::read(path, store, true);
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.not_a_trace);
  EXPECT_EQ(out.error, path + ": valid JSON but not a trace (no top-level \"traceEvents\")");
}

// A bare top-level array is the Chrome "JSON array" trace form, so it is a
// trace only if it holds events. [1,2] (or []) is some other JSON: not a
// trace, exactly like {"a":1}, so a folder skips it with a note.
TEST(BadInput, BareArrayOfNonObjectsIsNotATrace) {
  TempDir dir;
  for (std::string text : {"[1,2]", "[]", "[[1], \"x\", null]"}) {
    std::string path = dir.write("list.json", text);
    EventStore store;
    ReadOutcome out = testing::read(path, store);
    EXPECT_FALSE(out.ok) << text;
    EXPECT_TRUE(out.not_a_trace) << text;
    EXPECT_EQ(out.error, path + ": valid JSON but not a trace (top-level array holds no trace events)")
        << text;
  }
}

TEST(BadInput, BareArrayOfEventsIsATrace) {
  TempDir dir;
  std::string text = "[";  // (built in steps: GCC 12 warns falsely on "[" + s + "]")
  text += x_event("cpu_op", "a", "1.5", "2");
  text += ", 7]";
  std::string path = dir.write("arr.json", text);
  EventStore store;
  ReadOutcome out = testing::read(path, store);
  ASSERT_TRUE(out.ok) << out.error;
  ASSERT_EQ(store.events.size(), 1u);
  EXPECT_EQ(store.events.ts_ns[0], 1500);
  EXPECT_EQ(store.stats.count(ImportCounter::kRecordNotObject), 1u);
}

// A leading UTF-8 byte-order mark is skipped (plain and gzip); anywhere else
// it is not JSON, and only at the start is it a mark.
TEST(BadInput, LeadingByteOrderMarkIsSkipped) {
  TempDir dir;
  const std::string bom = "\xEF\xBB\xBF";
  std::string text = bom + trace_doc({x_event("cpu_op", "a", "10", "1"), x_event("cpu_op", "b", "12", "1")});
  read_plain_and_gzip(dir, "bom", text, [](const EventStore& store) { EXPECT_EQ(store.events.size(), 2u); });
  std::string twice = bom + text;
  EventStore store;
  ReadOutcome out = testing::read(dir.write("bom2.json", twice), store);
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.error.find("at byte 3"), std::string::npos) << out.error;
}

// A kernel name cut inside a multi-byte character (invalid UTF-8) must not
// cost the event: the record is repaired (U+FFFD), kept and counted. A record
// that is also wrong in another way is still skipped for that.
TEST(BadInput, InvalidUtf8InANameIsRepairedAndTheEventKept) {
  TempDir dir;
  std::string bad_name = "void gemm_\xE2\x82";  // a 3-byte character cut after 2 bytes
  std::string text = trace_doc({x_event("kernel", bad_name, "10", "5", "0", "7", R"("args": {"stream": 7})"),
                                x_event("cpu_op", "aten::\xFF", "\"x\"", "1"),
                                x_event("cpu_op", "aten::ok", "30", "1")});
  read_plain_and_gzip(dir, "t", text, [&](const EventStore& store) {
    ASSERT_EQ(store.events.size(), 2u);
    EXPECT_EQ(store.strings.get(store.events.name[0]), "void gemm_\xEF\xBF\xBD");
    EXPECT_EQ(store.gpu_rows.size(), 1u);
    EXPECT_EQ(store.stats.count(ImportCounter::kInvalidUtf8Repaired), 2u);
    EXPECT_EQ(store.stats.count(ImportCounter::kBadFieldType), 1u);
    EXPECT_EQ(store.stats.skipped_records(), 1u);
    ASSERT_FALSE(store.stats.log().empty());
    EXPECT_EQ(store.stats.log()[0].counter, ImportCounter::kInvalidUtf8Repaired);
    EXPECT_EQ(store.stats.log()[0].byte_offset, text.find("{\"ph\""));
    EXPECT_EQ(store.stats.log()[0].message, "1 invalid UTF-8 sequence replaced by U+FFFD");
    EXPECT_EQ(import_warning(store.stats),
              "1 malformed record skipped (first at byte " + std::to_string(text.find("{\"ph\": \"X\", \"cat\": \"cpu_op\"")) +
                  "); 2 records with invalid UTF-8 kept, the bad bytes replaced by U+FFFD");
  });
}

// Under "traceEvents" the structure says it is a trace: non-object elements
// are counted warnings and the (empty) trace loads.
TEST(BadInput, TraceEventsOfNonObjectsLoadsWithWarnings) {
  TempDir dir;
  std::string text = R"({"traceEvents": [1, 2]})";
  std::string path = dir.write("t.json", text);
  EventStore store;
  ReadOutcome out = testing::read(path, store);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(store.events.size(), 0u);
  EXPECT_EQ(store.stats.count(ImportCounter::kRecordNotObject), 2u);
  ASSERT_EQ(store.stats.log().size(), 2u);
  EXPECT_EQ(store.stats.log()[0].byte_offset, text.find('1'));
  EXPECT_EQ(store.stats.log()[1].byte_offset, text.find('2'));
}

TEST(BadInput, DeepNestingAtTopLevelIsRejectedWithoutRecursion) {
  TempDir dir;
  std::string path = dir.write("deep.json", std::string(200000, '['));
  EventStore store;
  ReadOutcome out = testing::read(path, store, true);
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(one_line(out.error));
  EXPECT_NE(out.error.find("nesting deeper than"), std::string::npos) << out.error;
  EXPECT_EQ(out.error.rfind(path + ": ", 0), 0u) << out.error;
}

TEST(BadInput, DeepNestingInsideArgsIsRejectedWithoutRecursion) {
  TempDir dir;
  const size_t depth = 200000;
  std::string head = "{\"traceEvents\": [" + x_event("cpu_op", "ok", "1", "1") + ", ";
  std::string deep = x_event("cpu_op", "deep", "2", "1", "1", "1",
                             "\"args\": {\"a\": " + std::string(depth, '[') + std::string(depth, ']') + "}");
  std::string path = dir.write("deep_args.json", head + deep + "]}");
  EventStore store;
  ReadOutcome out = testing::read(path, store);
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(one_line(out.error));
  EXPECT_NE(out.error.find("nesting deeper than 1024 levels"), std::string::npos) << out.error;
  // The offset points into the deep event, past the good one.
  size_t at = out.error.rfind("at byte ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_GT(std::stoull(out.error.substr(at + 8)), head.size());

  EventStore salvaged;  // with salvage, the event before the deep one is kept
  out = testing::read(path, salvaged, true);
  ASSERT_TRUE(out.ok) << out.error;
  ASSERT_EQ(salvaged.events.size(), 1u);
  EXPECT_EQ(salvaged.name_of(0), "ok");
}

TEST(BadInput, LegalDepthInsideArgsIsReadAndTheArgDropped) {
  TempDir dir;
  const size_t depth = 1000;  // below the 1024 limit, with the event and args objects
  std::string deep = x_event("cpu_op", "deep", "2", "1", "1", "1",
                             "\"args\": {\"a\": " + std::string(depth, '[') + std::string(depth, ']') +
                                 ", \"Sequence number\": 9}");
  std::string path = dir.write("t.json", "{\"traceEvents\": [" + deep + "]}");
  EventStore store;
  ReadOutcome out = testing::read(path, store);
  ASSERT_TRUE(out.ok) << out.error;
  ASSERT_EQ(store.events.size(), 1u);
  EXPECT_EQ(store.arg_int(0, store.strings.find("Sequence number")), 9);
  EXPECT_EQ(store.stats.count(ImportCounter::kDroppedArgs), 1u);
}

TEST(BadInput, MissingFileAndFolderAsFile) {
  TempDir dir;
  EventStore store;
  ReadOutcome out = testing::read(dir.file("nope.json"), store);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error, dir.file("nope.json") + ": not a readable file");
  LoadResult r = load_traces({dir.file("nope.json")}, ReadOptions{});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, dir.file("nope.json") + ": no such file or folder");
}

TEST(BadInput, TrailingGarbageAfterTheDocument) {
  TempDir dir;
  std::string doc = trace_doc(cpu_ops(3));
  std::string path = dir.write("t.json", doc + "xyz");
  EventStore store;
  ReadOutcome out = testing::read(path, store);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error, path + ": unexpected data after the end of the JSON document at byte " +
                           std::to_string(doc.size()));
}

}  // namespace
}  // namespace stepscope::trace
