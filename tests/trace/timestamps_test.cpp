// Timestamps are exact to the nanosecond: Kineto writes microseconds with
// three decimals ("5094256055534.458") at magnitudes where a double has no
// nanosecond digits left. The oracle here is string surgery on the JSON text
// (drop the '.', pad to three decimals), independent of the reader's parser.
#include <gtest/gtest.h>

#include <algorithm>

#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

// "5094256055534.458" -> 5094256055534458; "12" -> 12000; "1.5" -> 1500.
int64_t us_text_to_ns(std::string text) {
  size_t dot = text.find('.');
  std::string frac = dot == std::string::npos ? "" : text.substr(dot + 1);
  std::string whole = text.substr(0, dot);
  EXPECT_LE(frac.size(), 3u) << text;
  frac.resize(3, '0');
  return std::stoll(whole + frac);
}

// The number after `key` at or after `from` in `text`, as written.
std::string number_after(const std::string& text, const std::string& key, size_t from) {
  size_t at = text.find(key, from);
  if (at == std::string::npos) return {};
  at += key.size();
  size_t end = text.find_first_not_of("0123456789.-", at);
  return text.substr(at, end - at);
}

TEST(Timestamps, ExactOnAFloatMicrosecondTrace) {
  SKIP_WITHOUT_SHARED();
  std::string path = testing::shared_trace("traces/h200/gpt_baseline_bf16");
  std::string text = testing::gunzip_file(path);
  EventStore s;
  ASSERT_TRUE(testing::read(path, s).ok);
  EXPECT_EQ(std::to_string(s.meta.base_time_ns), number_after(text, "\"baseTimeNanoseconds\": ", 0));

  // Every complete event in the first 2 MB: its ts and dur, as text, must be
  // a (ts, dur) pair of the store.
  std::vector<std::pair<int64_t, int64_t>> stored;
  for (size_t i = 0; i < s.events.size(); ++i) stored.emplace_back(s.events.ts_ns[i], s.events.dur_ns[i]);
  std::sort(stored.begin(), stored.end());
  size_t checked = 0, with_fraction = 0;
  const std::string ph = "\"ph\": \"X\"";
  for (size_t at = text.find(ph); at != std::string::npos && at < (2u << 20); at = text.find(ph, at + 1)) {
    size_t next = text.find("\"ph\"", at + 1);
    std::string ts = number_after(text, "\"ts\": ", at);
    std::string dur = number_after(text, "\"dur\": ", at);
    ASSERT_FALSE(ts.empty());
    ASSERT_LT(text.find("\"dur\": ", at), next);  // both belong to this record
    if (ts.find('.') != std::string::npos) ++with_fraction;
    std::pair<int64_t, int64_t> want{us_text_to_ns(ts), us_text_to_ns(dur)};
    ASSERT_TRUE(std::binary_search(stored.begin(), stored.end(), want))
        << "ts " << ts << " dur " << dur << " not found as " << want.first << " ns";
    ++checked;
  }
  EXPECT_GT(checked, 1000u);
  EXPECT_GT(with_fraction, checked / 2);  // the trace really is fractional
}

TEST(Timestamps, FirstEventsOfARealTraceByName) {
  SKIP_WITHOUT_SHARED();
  std::string path = testing::shared_trace("traces/h200/gpt_baseline_bf16");
  std::string text = testing::gunzip_file(path);
  EventStore s;
  ASSERT_TRUE(testing::read(path, s).ok);
  // The first three complete events in file order, looked up by name and start.
  const std::string ph = "\"ph\": \"X\"";
  size_t at = 0;
  for (int k = 0; k < 3; ++k) {
    at = text.find(ph, at + 1);
    ASSERT_NE(at, std::string::npos);
    size_t name_at = text.find("\"name\": \"", at) + 9;
    std::string name = text.substr(name_at, text.find('"', name_at) - name_at);
    int64_t ts = us_text_to_ns(number_after(text, "\"ts\": ", at));
    int64_t dur = us_text_to_ns(number_after(text, "\"dur\": ", at));
    auto lo = std::lower_bound(s.events.ts_ns.begin(), s.events.ts_ns.end(), ts);
    bool found = false;
    for (auto it = lo; it != s.events.ts_ns.end() && *it == ts; ++it) {
      size_t i = static_cast<size_t>(it - s.events.ts_ns.begin());
      if (s.name_of(i) == name && s.events.dur_ns[i] == dur) found = true;
    }
    EXPECT_TRUE(found) << name << " at " << ts << " ns";
  }
}

TEST(Timestamps, NanosecondTraceWithIntegerMicroseconds) {
  SKIP_WITHOUT_SHARED();
  // The 2023 format: integer microseconds at 1.69e15.
  std::string path = testing::shared_trace("conformance/hta/critical_path_simple_add");
  std::string text = testing::gunzip_file(path);
  EventStore s;
  ASSERT_TRUE(testing::read(path, s).ok);
  std::string first_ts = number_after(text, "\"ts\": ", text.find("\"ph\": \"X\""));
  ASSERT_EQ(first_ts.find('.'), std::string::npos);
  EXPECT_TRUE(std::binary_search(s.events.ts_ns.begin(), s.events.ts_ns.end(), std::stoll(first_ts) * 1000));
}

TEST(Timestamps, ValuesPastDoublePrecisionSurvive) {
  testing::TempDir dir;
  std::string path = dir.write(
      "t.json", testing::trace_doc({testing::x_event("cpu_op", "a", "1790857026000000.123", "0.001"),
                                    testing::x_event("cpu_op", "b", "1790857026000000.124", "1e-3")}));
  EventStore s;
  ASSERT_TRUE(testing::read(path, s).ok);
  ASSERT_EQ(s.events.size(), 2u);
  EXPECT_EQ(s.events.ts_ns[0], 1790857026000000123);
  EXPECT_EQ(s.events.ts_ns[1], 1790857026000000124);  // a double would merge these
  EXPECT_EQ(s.events.dur_ns[0], 1);
  EXPECT_EQ(s.events.dur_ns[1], 1);
}

}  // namespace
}  // namespace stepscope::trace
