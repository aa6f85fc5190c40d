// --salvage reads on past a damaged traceEvents record. An unescaped '"' in
// one record (a name with a quote that the writer did not escape) turns every
// later string inside out, so without resync the reading ends there; with it,
// the damaged stretch is skipped to the next whole record, counted and logged
// with its offset, and every later event is kept. Each case is read directly
// and through the pipelined reader, with read sizes that cut the damaged
// record and the next one (the resync must survive refills).
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "trace/event_store.h"
#include "trace/trace_reader.h"
#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

using testing::TempDir;
using testing::cpu_ops;
using testing::trace_doc;
using testing::x_event;

struct Read {
  TokenizeResult result;
  EventStore store;
};

template <typename Check>
void for_each_read(const std::string& text, bool resync, Check check) {
  for (bool pipelined : {false, true}) {
    for (size_t chunk : {size_t{16}, size_t{97}, size_t{1} << 16}) {
      SCOPED_TRACE(std::string(pipelined ? "pipelined" : "direct") + ", chunk " + std::to_string(chunk));
      TokenizerOptions options;
      options.chunk_bytes = chunk;
      options.resync = resync;
      Read r;
      r.result = read_trace_bytes(text, r.store, options, pipelined);
      check(r);
    }
  }
}

std::vector<std::string> names(const EventStore& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.events.size(); ++i) out.emplace_back(s.name_of(i));
  return out;
}

// Ten CPU ops, the fourth named with an unescaped quote.
std::string doc_with_quote_in_event(int k, const std::string& separator = ",\n    ") {
  std::vector<std::string> ev = cpu_ops(10);
  ev[static_cast<size_t>(k)] = x_event("cpu_op", "aten::op\"" + std::to_string(k), std::to_string(1000 + 10 * k), "5");
  std::string body;
  for (size_t i = 0; i < ev.size(); ++i) body += (i ? separator : "") + ev[i];
  return "{\"schemaVersion\": 1, \"traceEvents\": [\n    " + body + "\n  ]\n}\n";
}

std::vector<std::string> ops_without(int k) {
  std::vector<std::string> v;
  for (int i = 0; i < 10; ++i)
    if (i != k) v.push_back("aten::op" + std::to_string(i));
  return v;
}

TEST(DamagedRecordResync, AnUnescapedQuoteCostsOnlyItsRecord) {
  const std::string text = doc_with_quote_in_event(3);
  const size_t damaged = text.rfind('{', text.find("op\"3"));
  const size_t next = text.find('{', text.find("op\"3"));
  for_each_read(text, true, [&](const Read& r) {
    EXPECT_EQ(r.result.status, TokenizeStatus::kOk) << r.result.message;
    EXPECT_EQ(names(r.store), ops_without(3));
    EXPECT_EQ(r.store.stats.count(ImportCounter::kDamagedRecordSkipped), 1u);
    EXPECT_EQ(r.store.stats.skipped_records(), 1u);
    ASSERT_EQ(r.store.stats.log().size(), 1u);
    const ImportLogEntry& e = r.store.stats.log()[0];
    EXPECT_EQ(e.byte_offset, damaged);
    EXPECT_EQ(e.message, "the record that starts here does not close (an unescaped '\"' or a missing bracket in it); skipped " +
                             std::to_string(next - damaged) + " bytes up to the next record, at byte " + std::to_string(next));
  });
}

// A trace written on one line (json.dump without indent): records are found
// after ',' instead of at line starts.
TEST(DamagedRecordResync, OneLineTracesResyncAfterTheComma) {
  const std::string text = doc_with_quote_in_event(6, ", ");
  for_each_read(text, true, [&](const Read& r) {
    EXPECT_EQ(r.result.status, TokenizeStatus::kOk) << r.result.message;
    EXPECT_EQ(names(r.store), ops_without(6));
    EXPECT_EQ(r.store.stats.count(ImportCounter::kDamagedRecordSkipped), 1u);
  });
}

// Without resync (no --salvage) the same file is an error at that record,
// and nothing after it is read.
TEST(DamagedRecordResync, WithoutResyncTheDamageEndsTheReading) {
  const std::string text = doc_with_quote_in_event(3);
  for_each_read(text, false, [&](const Read& r) {
    EXPECT_EQ(r.result.status, TokenizeStatus::kTruncated);
    EXPECT_EQ(r.store.events.size(), 3u);
    EXPECT_EQ(r.store.stats.count(ImportCounter::kDamagedRecordSkipped), 0u);
  });
}

// Stray bytes between records are skipped; two records without the ','
// between them are both read. Each is counted on its own.
TEST(DamagedRecordResync, StrayBytesAreSkippedAndAMissingCommaIsRead) {
  std::vector<std::string> ev = cpu_ops(6);
  const std::string text = "{\"traceEvents\": [\n    " + ev[0] + ",\n    " + ev[1] + " garbage,\n    " + ev[2] + ",\n    " +
                           ev[3] + "\n    " + ev[4] + ",\n    " + ev[5] + "\n]}";
  for_each_read(text, true, [&](const Read& r) {
    EXPECT_EQ(r.result.status, TokenizeStatus::kOk) << r.result.message;
    EXPECT_EQ(names(r.store), (std::vector<std::string>{"aten::op0", "aten::op1", "aten::op2", "aten::op3", "aten::op4",
                                                        "aten::op5"}));
    EXPECT_EQ(r.store.stats.count(ImportCounter::kDamagedRecordSkipped), 1u);
    EXPECT_EQ(r.store.stats.count(ImportCounter::kMissingComma), 1u);
    EXPECT_EQ(r.store.stats.skipped_records(), 1u);  // the stray bytes; the records around the missing ',' are kept
    ASSERT_EQ(r.store.stats.log().size(), 2u);
    EXPECT_EQ(r.store.stats.log()[0].byte_offset, text.find("garbage"));
    EXPECT_EQ(r.store.stats.log()[1].byte_offset, text.find(ev[4]));  // no ',' before it
  });
}

// Damage in the last record: nothing whole follows, so the failure stands
// (the reader's caller salvages the events before it).
TEST(DamagedRecordResync, DamageInTheLastRecordStillFails) {
  const std::string text = doc_with_quote_in_event(9);
  for_each_read(text, true, [&](const Read& r) {
    EXPECT_EQ(r.result.status, TokenizeStatus::kTruncated);
    EXPECT_NE(r.result.message.find("record that starts at byte " + std::to_string(text.rfind('{', text.find("op\"9")))),
              std::string::npos)
        << r.result.message;
    EXPECT_EQ(r.store.events.size(), 9u);
    EXPECT_EQ(r.store.stats.count(ImportCounter::kDamagedRecordSkipped), 0u);
  });
}

// A '{' inside the damaged record is no record start: an inner object that
// closes and is followed by ',' still needs a line start or a ',' / '['
// before it, and the args object of the damaged record has neither.
TEST(DamagedRecordResync, ObjectsInsideTheDamagedRecordAreNotTakenForRecords) {
  std::vector<std::string> ev = cpu_ops(4);
  ev[1] = x_event("cpu_op", "odd\"name", "1010", "5", "1", "1", R"("args": {"a": {"b": 1}, "c": 2})");
  const std::string text = trace_doc(ev);
  for_each_read(text, true, [&](const Read& r) {
    EXPECT_EQ(r.result.status, TokenizeStatus::kOk) << r.result.message;
    EXPECT_EQ(names(r.store), (std::vector<std::string>{"aten::op0", "aten::op2", "aten::op3"}));
    EXPECT_EQ(r.store.stats.count(ImportCounter::kDamagedRecordSkipped), 1u);
  });
}

// Through read_trace_file: --salvage turns resync on; the file reads as a
// whole (not salvaged: nothing was cut), the damage is in the counts.
TEST(DamagedRecordResync, SalvageTurnsItOnForFiles) {
  TempDir dir;
  const std::string path = dir.write("q.json", doc_with_quote_in_event(3));
  EventStore failed;
  ReadOutcome out = testing::read(path, failed);
  EXPECT_FALSE(out.ok);
  EventStore store;
  out = testing::read(path, store, /*salvage=*/true);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_FALSE(out.salvaged);
  EXPECT_EQ(store.events.size(), 9u);
  const std::string warning = import_warning(store.stats);
  EXPECT_NE(warning.find("1 malformed record skipped"), std::string::npos) << warning;
  EXPECT_NE(warning.find("damaged stretch"), std::string::npos) << warning;
}

}  // namespace
}  // namespace stepscope::trace
