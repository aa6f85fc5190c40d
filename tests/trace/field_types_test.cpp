// Records with fields of the wrong type or numbers out of range: each is
// skipped and counted under its own counter with the byte offset of the
// record, and every good event around them survives unchanged.
#include <gtest/gtest.h>

#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

using testing::TempDir;
using testing::trace_doc;
using testing::x_event;

struct Loaded {
  std::string text;
  EventStore store;
  ReadOutcome outcome;
};

void load(const std::vector<std::string>& events, Loaded& out) {
  TempDir dir;
  out.text = trace_doc(events);
  std::string path = dir.write("t.json", out.text);
  out.outcome = testing::read(path, out.store);
}

// The offset of the record holding `needle` (the '{' before it).
uint64_t record_offset(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  return text.rfind('{', at);
}

const ImportLogEntry* logged(const EventStore& s, ImportCounter c, size_t nth = 0) {
  for (const auto& e : s.stats.log())
    if (e.counter == c && nth-- == 0) return &e;
  return nullptr;
}

TEST(FieldTypes, WrongTypesAreSkippedCountedAndLocated) {
  Loaded l;
  load({
           x_event("cpu_op", "good0", "10", "1"),
           x_event("cpu_op", "bad_ts", "\"abc\"", "1"),
           x_event("cpu_op", "good1", "20", "1"),
           x_event("cpu_op", "bad_dur", "30", "{}"),
           x_event("cpu_op", "bad_pid", "40", "1", "[]"),
           x_event("cpu_op", "bad_tid", "41", "1", "1", "{\"x\": 1}"),
           x_event("cpu_op", "bad_name_type", "42", "1", "1", "1", "\"args\": 5"),
           R"({"ph": 7, "name": "bad_ph", "ts": 43})",
           x_event("cpu_op", "good2", "50", "1"),
       },
       l);
  ASSERT_TRUE(l.outcome.ok) << l.outcome.error;
  const EventStore& s = l.store;
  ASSERT_EQ(s.events.size(), 3u);
  EXPECT_EQ(s.name_of(0), "good0");
  EXPECT_EQ(s.name_of(1), "good1");
  EXPECT_EQ(s.name_of(2), "good2");
  EXPECT_EQ(s.events.ts_ns[2], 50000);
  EXPECT_EQ(s.stats.count(ImportCounter::kBadFieldType), 6u);
  EXPECT_EQ(s.stats.skipped_records(), 6u);
  // Only the first five occurrences are logged; each with its record's offset.
  ASSERT_EQ(s.stats.log().size(), ImportStats::kMaxLoggedPerCounter);
  const char* names[] = {"\"bad_ts\"", "\"bad_dur\"", "\"bad_pid\"", "\"bad_tid\"", "\"bad_name_type\""};
  const char* fields[] = {"\"ts\"", "\"dur\"", "\"pid\"", "\"tid\"", "\"args\""};
  for (size_t i = 0; i < 5; ++i) {
    const ImportLogEntry* e = logged(s, ImportCounter::kBadFieldType, i);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->byte_offset, record_offset(l.text, names[i])) << names[i];
    EXPECT_NE(e->message.find(fields[i]), std::string::npos) << e->message;
  }
}

TEST(FieldTypes, OutOfRangeNumbersAreSkippedAndCounted) {
  Loaded l;
  load({
           x_event("cpu_op", "good0", "10", "1"),
           x_event("cpu_op", "huge_ts", "1e300", "1"),
           x_event("cpu_op", "huge_dur", "11", "99999999999999999999"),
           x_event("cpu_op", "huge_pid", "12", "1", "4294967296"),
           x_event("cpu_op", "good1", "13", "1"),
           x_event("cpu_op", "negative_dur", "14", "-3"),
           R"({"ph": "X", "cat": "cpu_op", "name": "no_ts", "dur": 1})",
       },
       l);
  ASSERT_TRUE(l.outcome.ok) << l.outcome.error;
  const EventStore& s = l.store;
  ASSERT_EQ(s.events.size(), 2u);
  EXPECT_EQ(s.name_of(0), "good0");
  EXPECT_EQ(s.name_of(1), "good1");
  EXPECT_EQ(s.stats.count(ImportCounter::kNumberOutOfRange), 3u);
  EXPECT_EQ(s.stats.count(ImportCounter::kNegativeDuration), 1u);
  EXPECT_EQ(s.stats.count(ImportCounter::kMissingTimestamp), 1u);
  EXPECT_EQ(s.stats.skipped_records(), 5u);
  const ImportLogEntry* e = logged(s, ImportCounter::kNumberOutOfRange, 0);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->byte_offset, record_offset(l.text, "\"huge_ts\""));
  EXPECT_EQ(e->message, "field \"ts\" out of range");
  e = logged(s, ImportCounter::kNumberOutOfRange, 2);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->byte_offset, record_offset(l.text, "\"huge_pid\""));
  e = logged(s, ImportCounter::kNegativeDuration, 0);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->byte_offset, record_offset(l.text, "\"negative_dur\""));
}

TEST(FieldTypes, InvalidJsonInsideOneRecordSkipsOnlyThatRecord) {
  Loaded l;
  load({
           x_event("cpu_op", "good0", "10", "1"),
           R"({"ph": "X", "name": "bad_literal", "ts": 11, "dur": tru})",
           R"({"ph": "X", "name": "bad_string", "ts": 12, "dur": 1, "cat": "\x"})",
           x_event("cpu_op", "good1", "13", "1"),
       },
       l);
  ASSERT_TRUE(l.outcome.ok) << l.outcome.error;
  ASSERT_EQ(l.store.events.size(), 2u);
  EXPECT_EQ(l.store.name_of(0), "good0");
  EXPECT_EQ(l.store.name_of(1), "good1");
  // "tru" is no number (simdjson types it by its first byte): bad_field_type.
  // "\x" is an invalid escape in a string the parser reads: bad_field_type too.
  EXPECT_EQ(l.store.stats.count(ImportCounter::kBadFieldType), 2u);
  ASSERT_EQ(l.store.stats.log().size(), 2u);
  EXPECT_EQ(l.store.stats.log()[0].byte_offset, record_offset(l.text, "\"bad_literal\""));
  EXPECT_EQ(l.store.stats.log()[0].message, "field \"dur\" is not a number");
  EXPECT_EQ(l.store.stats.log()[1].byte_offset, record_offset(l.text, "\"bad_string\""));
  EXPECT_EQ(l.store.stats.log()[1].message, "field \"cat\" is not a string");
}

// On-Demand parsing validates only what it reads: invalid JSON inside an
// argument no analysis uses, or inside a kept argument stored as raw JSON, is
// not detected and the record is kept. Pinned here so a change is deliberate.
TEST(FieldTypes, InvalidJsonInUnreadValuesIsNotDetected) {
  Loaded l;
  load({
           x_event("cpu_op", "unread", "12", "1", "1", "1", R"("args": {"a": [1, 2,]})"),
           x_event("cpu_op", "raw_kept", "13", "1", "1", "1", R"("args": {"Input Dims": [1, 2,]})"),
       },
       l);
  ASSERT_TRUE(l.outcome.ok) << l.outcome.error;
  ASSERT_EQ(l.store.events.size(), 2u);
  EXPECT_EQ(l.store.stats.skipped_records(), 0u);
  EXPECT_EQ(l.store.arg_string(1, l.store.strings.find("Input Dims")), "[1, 2,]");
}

// A record whose brackets do not balance cannot be delimited: the structural
// scan runs on to the end of traceEvents and the read stops with an error.
TEST(FieldTypes, UnbalancedRecordEndsTheReadWithAnError) {
  TempDir dir;
  std::string text = trace_doc({x_event("cpu_op", "good0", "10", "1"),
                                R"({"ph": "X", "name": "open", "ts": 11, "args": {"a": [1}})",
                                x_event("cpu_op", "good1", "13", "1")});
  std::string path = dir.write("t.json", text);
  EventStore store;
  ReadOutcome out = testing::read(path, store);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error.rfind(path + ": ", 0), 0u) << out.error;
  EXPECT_EQ(out.error.find('\n'), std::string::npos);
}

TEST(FieldTypes, IdsWrittenAsHexOrDecimalStrings) {
  Loaded l;
  load({
           x_event("cuda_runtime", "hipLaunchKernel", "10", "1", "7", "7",
                   R"("args": {"correlation": "0x1f", "External id": "12", "stream": "0x0"})"),
           x_event("kernel", "k", "11", "1", "0", "3",
                   R"("args": {"correlation": 31, "stream": "0x0", "device": "0x1"})"),
       },
       l);
  ASSERT_TRUE(l.outcome.ok) << l.outcome.error;
  const EventStore& s = l.store;
  ASSERT_EQ(s.events.size(), 2u);
  EXPECT_EQ(s.events.correlation[0], 31);
  EXPECT_EQ(s.events.external_id[0], 12);
  EXPECT_EQ(s.events.stream[0], kNone);  // a hex stream on a host row is a queue handle
  EXPECT_EQ(s.events.stream[1], 0);      // "0x0" (HIP) is stream 0
  EXPECT_EQ(s.events.device[1], 1);
  ASSERT_EQ(s.gpu_rows.size(), 1u);
  EXPECT_EQ(s.launch_of_gpu[0], 0u);  // joined through the hex correlation
  EXPECT_EQ(s.stats.skipped_records(), 0u);
}

// Ids beyond int64 (unsigned 64-bit values) keep the event and still join;
// beyond uint64 the id is not a number the reader can hold: event skipped.
TEST(FieldTypes, IdsPastInt64AreKeptAndJoin) {
  Loaded l;
  load({
           x_event("cuda_runtime", "cudaLaunchKernel", "10", "1", "7", "7",
                   R"("args": {"correlation": 18446744073709551000, "External id": 9223372036854775808})"),
           x_event("kernel", "k", "11", "1", "0", "7", R"("args": {"correlation": 18446744073709551000, "stream": 7})"),
           x_event("kernel", "k2", "12", "1", "0", "7", R"("args": {"correlation": 18446744073709551616, "stream": 7})"),
       },
       l);
  ASSERT_TRUE(l.outcome.ok) << l.outcome.error;
  const EventStore& s = l.store;
  ASSERT_EQ(s.events.size(), 2u);
  EXPECT_EQ(static_cast<uint64_t>(s.events.correlation[0]), 18446744073709551000ull);
  EXPECT_EQ(static_cast<uint64_t>(s.events.external_id[0]), 9223372036854775808ull);
  ASSERT_EQ(s.gpu_rows.size(), 1u);
  EXPECT_EQ(s.launch_of_gpu[0], 0u);
  EXPECT_EQ(s.stats.count(ImportCounter::kBadFieldType), 1u);
}

// A thread id past INT64_MAX (an unsigned 64-bit value) keeps the event and
// its bit pattern, as correlation ids do; past UINT64_MAX it is skipped.
TEST(FieldTypes, ThreadIdsPastInt64AreKept) {
  Loaded l;
  load({
           x_event("cpu_op", "aten::mm", "10", "5", "7", "18446744073709551615"),
           x_event("cpu_op", "aten::add", "20", "5", "7", "18446744073709551615"),
           x_event("cpu_op", "aten::sub", "30", "5", "7", "18446744073709551616"),
       },
       l);
  ASSERT_TRUE(l.outcome.ok) << l.outcome.error;
  const EventStore& s = l.store;
  ASSERT_EQ(s.events.size(), 2u);
  EXPECT_EQ(static_cast<uint64_t>(s.events.tid[0]), 18446744073709551615ull);
  EXPECT_EQ(s.events.tid[0], s.events.tid[1]);
  EXPECT_EQ(s.stats.count(ImportCounter::kBadFieldType), 1u);
}

// Integers take simdjson's integer parser and every other number the
// reader's own: both ends of int64 are read exactly, an id written as a
// float is rounded as before, and a fractional argument stays a double.
TEST(FieldTypes, IntegerEdgesAndFloatIdsThroughEachNumberPath) {
  Loaded l;
  load({
           x_event("cuda_runtime", "cudaLaunchKernel", "10", "1", "7", "-9223372036854775808",
                   R"("args": {"correlation": -9223372036854775808, "External id": 9223372036854775807})"),
           x_event("kernel", "k", "11", "1", "0", "7.6",
                   R"("args": {"correlation": 5.0, "stream": 7, "registers per thread": 1.5, "shared memory": 4096})"),
       },
       l);
  ASSERT_TRUE(l.outcome.ok) << l.outcome.error;
  const EventStore& s = l.store;
  ASSERT_EQ(s.events.size(), 2u);
  EXPECT_EQ(s.stats.count(ImportCounter::kBadFieldType), 0u);
  EXPECT_EQ(s.events.tid[0], INT64_MIN);
  EXPECT_EQ(s.events.correlation[0], INT64_MIN);
  EXPECT_EQ(s.events.external_id[0], INT64_MAX);
  EXPECT_EQ(s.events.tid[1], 8);  // 7.6 rounded half away from zero
  EXPECT_EQ(s.events.correlation[1], 5);
  EXPECT_EQ(s.arg_int(1, s.strings.find("shared memory")), 4096);
  EXPECT_EQ(s.arg_int(1, s.strings.find("registers per thread")), std::nullopt);
  EXPECT_EQ(s.arg_number(1, s.strings.find("registers per thread")), 1.5);
}

// What Python's json.dump writes for None and non-finite floats: "args": null
// is an event without arguments, and NaN / Infinity in an argument cost
// only that argument.
TEST(FieldTypes, NullArgsAndNonFiniteArgumentsKeepTheEvent) {
  Loaded l;
  load({
           x_event("kernel", "k", "10", "1", "0", "7",
                   R"("args": {"stream": 7, "correlation": 5, "blocks per SM": NaN, "warps per SM": Infinity})"),
           x_event("kernel", "k2", "12", "1", "0", "7", R"("args": null)"),
       },
       l);
  ASSERT_TRUE(l.outcome.ok) << l.outcome.error;
  ASSERT_EQ(l.store.events.size(), 2u);
  EXPECT_EQ(l.store.events.correlation[0], 5);
  EXPECT_EQ(l.store.events.stream[1], 7);  // from the tid, as without arguments
  EXPECT_EQ(l.store.stats.skipped_records(), 0u);
}

TEST(FieldTypes, UnparsableStreamIsKeptAsUnknownNotSkipped) {
  Loaded l;
  load({x_event("kernel", "k", "11", "1", "0", "9", R"("args": {"stream": "default"})")}, l);
  ASSERT_TRUE(l.outcome.ok);
  ASSERT_EQ(l.store.events.size(), 1u);
  EXPECT_EQ(l.store.stats.count(ImportCounter::kUnparsedId), 1u);
  EXPECT_EQ(l.store.events.stream[0], 9);  // falls back to the tid, as 2021 traces do
}

}  // namespace
}  // namespace stepscope::trace
