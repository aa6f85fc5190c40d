// Values that no profiler writes and that would turn into wrong numbers
// downstream: times whose end does not fit int64, negative times, negative
// byte counts, step numbers past int64. Each record is skipped and counted
// under its own counter with its byte offset; the good events survive.
#include <gtest/gtest.h>

#include "trace/event_limits.h"
#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

using testing::trace_doc;
using testing::x_event;

struct Loaded {
  std::string text;
  EventStore store;
};

void load(const std::vector<std::string>& events, Loaded& out, const std::string& header = "") {
  out.text = trace_doc(events, header);
  TokenizerOptions opt;
  const TokenizeResult r = read_trace_bytes(out.text, out.store, opt);
  ASSERT_EQ(r.status, TokenizeStatus::kOk) << r.message;
}

uint64_t record_offset(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  return text.rfind('{', at);
}

const ImportLogEntry* logged(const EventStore& s, ImportCounter c) {
  for (const auto& e : s.stats.log())
    if (e.counter == c) return &e;
  return nullptr;
}

std::vector<std::string> names(const EventStore& s) {
  std::vector<std::string> v;
  for (size_t i = 0; i < s.events.size(); ++i) v.emplace_back(s.name_of(i));
  return v;
}

// dur near 2^63 ns passes the per-field check (it fits int64) but ts + dur
// does not: before the limit it came out as a negative idle time.
TEST(ValueLimits, EndThatDoesNotFitIsSkippedAndCounted) {
  Loaded l;
  load({x_event("kernel", "good", "1400", "100"), x_event("kernel", "huge", "1400", "9223372036854000")}, l);
  EXPECT_EQ(names(l.store), std::vector<std::string>{"good"});
  EXPECT_EQ(l.store.stats.count(ImportCounter::kTimeOutOfRange), 1u);
  const ImportLogEntry* e = logged(l.store, ImportCounter::kTimeOutOfRange);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->byte_offset, record_offset(l.text, "\"huge\""));
  EXPECT_EQ(e->message, "event with \"dur\" beyond 2^61 ns");
  EXPECT_EQ(l.store.stats.skipped_records(), 1u);
  EXPECT_NE(import_warning(l.store.stats).find("1 with ts or dur out of range"), std::string::npos)
      << import_warning(l.store.stats);
}

TEST(ValueLimits, LimitsAreInclusiveAndDocumented) {
  // 2^61 ns = 2305843009213693.952 us: exactly the limit is kept, one ns more is not.
  Loaded l;
  load({x_event("cpu_op", "at_limit", "0", "2305843009213693.952"),
        x_event("cpu_op", "past_limit", "0", "2305843009213693.953"),
        x_event("cpu_op", "ts_at_limit", "2305843009213693.952", "0"),
        x_event("cpu_op", "ts_past_limit", "2305843009213693.953", "0")},
       l);
  EXPECT_EQ(names(l.store), (std::vector<std::string>{"at_limit", "ts_at_limit"}));
  EXPECT_EQ(l.store.stats.count(ImportCounter::kTimeOutOfRange), 2u);
  EXPECT_EQ(kMaxTimeNs, int64_t{2305843009213693952});
  // The end of anything accepted, and any difference of two times, fits int64.
  EXPECT_LT(kMaxTimeNs + kMaxTimeNs, INT64_MAX - kMaxTimeNs);
}

TEST(ValueLimits, NegativeTimestampIsSkippedAndCounted) {
  Loaded l;
  load({x_event("kernel", "before_zero", "-5", "1"), x_event("kernel", "at_zero", "0", "1"),
        R"({"ph": "s", "id": 1, "pid": 1, "tid": 1, "ts": -3, "cat": "ac2g", "name": "f"})"},
       l);
  EXPECT_EQ(names(l.store), std::vector<std::string>{"at_zero"});
  EXPECT_EQ(l.store.flows.size(), 0u);
  EXPECT_EQ(l.store.stats.count(ImportCounter::kTimeOutOfRange), 2u);
  const ImportLogEntry* e = logged(l.store, ImportCounter::kTimeOutOfRange);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->message, "event with negative \"ts\"");
  EXPECT_EQ(e->byte_offset, record_offset(l.text, "\"before_zero\""));
}

// "bytes" of a copy and the allocator's totals are sizes; "Bytes" of an
// allocator sample is a delta and is negative for every free.
TEST(ValueLimits, NegativeByteCountsAreSkippedButFreesAreKept) {
  Loaded l;
  load({x_event("gpu_memcpy", "Memcpy HtoD", "10", "5", "0", "7", R"("args": {"bytes": -1000000})"),
        x_event("gpu_memcpy", "Memcpy DtoH", "20", "5", "0", "7", R"("args": {"bytes": 4096})"),
        R"({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 30, "args": {"Bytes": -512, "Total Allocated": -5, "Total Reserved": 1024}})",
        R"({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 31, "args": {"Bytes": -512, "Total Allocated": 512, "Total Reserved": -1.5}})",
        R"({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 32, "args": {"Bytes": -512, "Total Allocated": 512, "Total Reserved": 1024}})"},
       l);
  EXPECT_EQ(names(l.store), (std::vector<std::string>{"Memcpy DtoH", "[memory]"}));
  EXPECT_EQ(l.store.events.ts_ns[1], 32000);
  EXPECT_EQ(l.store.stats.count(ImportCounter::kNegativeSize), 3u);
  const ImportLogEntry* e = logged(l.store, ImportCounter::kNegativeSize);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->message, "args \"bytes\" is negative");
  EXPECT_EQ(e->byte_offset, record_offset(l.text, "Memcpy HtoD"));
  EXPECT_NE(import_warning(l.store.stats).find("3 with a negative byte count"), std::string::npos);
}

// ProfilerStep#N with an N past int64 used to come out as step -1.
TEST(ValueLimits, StepNumberThatDoesNotFitIsSkippedAndCounted) {
  Loaded l;
  load({x_event("user_annotation", "ProfilerStep#99999999999999999999999", "10", "5"),
        x_event("user_annotation", "ProfilerStep#-3", "20", "5"),
        x_event("user_annotation", "ProfilerStep#9223372036854775807", "30", "5"),
        x_event("user_annotation", "ProfilerStep#7", "40", "5")},
       l);
  EXPECT_EQ(names(l.store), (std::vector<std::string>{"ProfilerStep#9223372036854775807", "ProfilerStep#7"}));
  EXPECT_EQ(l.store.stats.count(ImportCounter::kNumberOutOfRange), 2u);
  const ImportLogEntry* e = logged(l.store, ImportCounter::kNumberOutOfRange);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->message, "step number of \"ProfilerStep#99999999999999999999999\" is negative or does not fit 64 bits");
}

TEST(ValueLimits, BaseTimeOutOfRangeIsIgnoredAndCounted) {
  Loaded l;
  load({x_event("cpu_op", "a", "10", "5")}, l, "\"baseTimeNanoseconds\": -9000000000000000000");
  EXPECT_EQ(l.store.meta.base_time_ns, 0);
  EXPECT_EQ(l.store.events.size(), 1u);
  EXPECT_EQ(l.store.stats.count(ImportCounter::kTimeOutOfRange), 1u);
  Loaded ok;
  load({x_event("cpu_op", "a", "10", "5")}, ok, "\"baseTimeNanoseconds\": 1790857026000000000");
  EXPECT_EQ(ok.store.meta.base_time_ns, 1790857026000000000);
  EXPECT_EQ(ok.store.stats.total(), 0u);
}

}  // namespace
}  // namespace stepscope::trace
