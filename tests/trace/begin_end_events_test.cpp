// Chrome Trace Event Format duration events: a "B" opens a slice on its
// (pid, tid), the next "E" there closes the most recent open one (slices
// nest per thread). Each matched pair is one complete event; an "E" with no
// open "B" and a "B" never closed are skipped and counted.
#include <gtest/gtest.h>

#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

using testing::trace_doc;

std::string be(char ph, const std::string& name, const std::string& ts, const std::string& tid = "1",
               const std::string& extra = "") {
  std::string e = std::string(R"({"ph": ")") + ph + R"(", "cat": "cpu_op", "name": ")" + name +
                  R"(", "pid": 1, "tid": )" + tid + R"(, "ts": )" + ts;
  if (!extra.empty()) e += ", " + extra;
  return e + "}";
}

struct Slice {
  std::string name;
  int64_t ts_ns, dur_ns;
  int64_t tid;
  bool operator==(const Slice&) const = default;
};

std::vector<Slice> slices(const EventStore& s) {
  std::vector<Slice> v;
  for (size_t i = 0; i < s.events.size(); ++i)
    v.push_back({std::string(s.name_of(i)), s.events.ts_ns[i], s.events.dur_ns[i], s.events.tid[i]});
  return v;
}

void PrintTo(const Slice& x, std::ostream* os) { *os << x.name << "@" << x.ts_ns << "+" << x.dur_ns << "/" << x.tid; }

TEST(BeginEndEvents, NestedPairsPerThreadBecomeCompleteEvents) {
  EventStore s;
  const std::string text = trace_doc({be('B', "outer", "10"), be('B', "inner", "12"), be('B', "other_thread", "13", "2"),
                                      be('E', "", "15"), be('E', "", "16", "2"), be('E', "", "20")});
  ASSERT_EQ(read_trace_bytes(text, s, TokenizerOptions{}).status, TokenizeStatus::kOk);
  EXPECT_EQ(slices(s), (std::vector<Slice>{{"outer", 10000, 10000, 1}, {"inner", 12000, 3000, 1},
                                           {"other_thread", 13000, 3000, 2}}));
  EXPECT_EQ(s.cpu_op_rows.size(), 3u);
  EXPECT_EQ(s.stats.total(), 0u);
}

TEST(BeginEndEvents, ArgumentsOfBothHalvesAreKept) {
  EventStore s;
  const std::string text =
      trace_doc({be('B', "op", "10", "1", R"("args": {"External id": 4, "Input Dims": [[2, 3]]})"),
                 be('E', "op", "11", "1", R"("args": {"Sequence number": 9})")});
  ASSERT_EQ(read_trace_bytes(text, s, TokenizerOptions{}).status, TokenizeStatus::kOk);
  ASSERT_EQ(s.events.size(), 1u);
  EXPECT_EQ(s.events.external_id[0], 4);
  EXPECT_EQ(s.arg_string(0, s.strings.find("Input Dims")), std::optional<std::string_view>("[[2, 3]]"));
  EXPECT_EQ(s.arg_int(0, s.strings.find("Sequence number")), std::optional<int64_t>(9));
}

TEST(BeginEndEvents, UnmatchedHalvesAreSkippedAndCounted) {
  EventStore s;
  const std::string text = trace_doc({be('E', "stray_end", "5"), be('B', "closed", "10"), be('E', "", "11"),
                                      be('B', "never_closed", "20"), be('B', "backwards", "30", "3"),
                                      be('E', "", "25", "3")});
  ASSERT_EQ(read_trace_bytes(text, s, TokenizerOptions{}).status, TokenizeStatus::kOk);
  EXPECT_EQ(slices(s), (std::vector<Slice>{{"closed", 10000, 1000, 1}}));
  EXPECT_EQ(s.stats.count(ImportCounter::kUnmatchedBeginEnd), 2u);  // the stray E, the B never closed
  EXPECT_EQ(s.stats.count(ImportCounter::kNegativeDuration), 1u);   // an E before its B
  EXPECT_EQ(s.stats.skipped_records(), 3u);
  std::vector<uint64_t> offsets;
  for (const auto& e : s.stats.log())
    if (e.counter == ImportCounter::kUnmatchedBeginEnd) offsets.push_back(e.byte_offset);
  ASSERT_EQ(offsets.size(), 2u);
  EXPECT_EQ(offsets[0], text.rfind('{', text.find("stray_end")));
  EXPECT_EQ(offsets[1], text.rfind('{', text.find("never_closed")));
  EXPECT_NE(import_warning(s.stats).find("2 B/E events without their pair"), std::string::npos)
      << import_warning(s.stats);
}

// A file of B/E events only used to read as an empty trace without a word.
TEST(BeginEndEvents, TraceOfOnlyBeginEndEventsIsAnalysable) {
  testing::TempDir dir;
  const std::string path = dir.write("be.json", trace_doc({be('B', "ProfilerStep#1", "0"), be('B', "aten::mm", "10"),
                                                           be('E', "", "90"), be('E', "", "100")}));
  EventStore s;
  ReadOutcome out = testing::read(path, s);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(s.events.size(), 2u);
  EXPECT_EQ(s.events.dur_ns[0], 100000);
}

}  // namespace
}  // namespace stepscope::trace
