// The time sort at the end of import: events move, their arguments do not
// (each event keeps its begin/count into the argument table), ties keep file
// order whichever sort key the trace's time span allows, and a record with
// more kept arguments than an event can hold is cut and counted.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trace/store_builder.h"
#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

using testing::TempDir;
using testing::trace_doc;
using testing::x_event;

TEST(StoreSort, ArgumentsFollowTheirEventThroughTheSort) {
  // Written newest first, each op with its own "flops" and "Input type".
  std::vector<std::string> events;
  const int n = 50;
  for (int i = n - 1; i >= 0; --i)
    events.push_back(x_event("cpu_op", "op" + std::to_string(i), std::to_string(100 + 10 * i), "5", "1", "1",
                             R"("args": {"flops": )" + std::to_string(1000 + i) + R"(, "Input type": ["t)" +
                                 std::to_string(i) + R"("]})"));
  TempDir dir;
  EventStore s;
  ASSERT_TRUE(testing::read(dir.write("t.json", trace_doc(events)), s).ok);
  ASSERT_EQ(s.events.size(), static_cast<size_t>(n));
  const StringId flops = s.strings.find("flops"), input_type = s.strings.find("Input type");
  for (size_t i = 0; i < s.events.size(); ++i) {
    ASSERT_EQ(s.name_of(i), "op" + std::to_string(i)) << "not in time order";
    EXPECT_EQ(s.arg_int(i, flops), 1000 + static_cast<int64_t>(i));
    EXPECT_EQ(s.arg_string(i, input_type), "[\"t" + std::to_string(i) + "\"]");
    EXPECT_EQ(s.events.args_count[i], 2u);
  }
}

// Equal starts keep file order: once with the packed 64-bit sort key (a short
// trace) and once with the (start, row) pairs a span of ~2^62 ns needs.
void expect_ties_in_file_order(const std::string& far_ts) {
  std::vector<std::string> events = {x_event("cpu_op", "late", far_ts, "1")};
  for (int i = 0; i < 20; ++i) events.push_back(x_event("cpu_op", "tie" + std::to_string(i), "7", "1"));
  events.push_back(x_event("cpu_op", "first", "3", "1"));
  TempDir dir;
  EventStore s;
  ASSERT_TRUE(testing::read(dir.write("t.json", trace_doc(events)), s).ok);
  ASSERT_EQ(s.events.size(), 22u);
  EXPECT_EQ(s.name_of(0), "first");
  for (int i = 0; i < 20; ++i) EXPECT_EQ(s.name_of(1 + i), "tie" + std::to_string(i));
  EXPECT_EQ(s.name_of(21), "late");
}

TEST(StoreSort, TiesKeepFileOrderWithPackedKeys) { expect_ties_in_file_order("1000"); }

TEST(StoreSort, TiesKeepFileOrderWhenTheSpanNeedsWideKeys) {
  // 2.3e15 us = 2.3e18 ns, just under the 2^61 ns time limit: a 61-bit
  // span, with 5 bits of row index the key needs > 64 bits.
  expect_ties_in_file_order("2305843009213693");
}

TEST(StoreSort, ArgumentsBeyondTheCapAreDroppedAndCounted) {
  EventStore s;
  StoreBuilder b(s);
  const StringId key = b.intern("flops");
  for (size_t i = 0; i < kMaxArgsPerEvent + 45; ++i) b.stage_int_arg(key, static_cast<int64_t>(i));
  EventRow row;
  row.ts_ns = 10;
  row.name = b.intern("op");
  b.add_event(row);
  b.stage_int_arg(key, 7);
  EventRow second;
  second.ts_ns = 5;
  second.name = b.intern("earlier");
  b.add_event(second);
  b.finish();
  ASSERT_EQ(s.events.size(), 2u);
  EXPECT_EQ(s.name_of(0), "earlier");
  EXPECT_EQ(s.events.args_count[0], 1u);
  EXPECT_EQ(s.arg_int(0, key), 7);
  EXPECT_EQ(s.events.args_count[1], kMaxArgsPerEvent);
  EXPECT_EQ(s.arg_int(1, key), 0);  // the first of the repeated key is what lookups see
  EXPECT_EQ(s.stats.count(ImportCounter::kDroppedArgs), 45u);
}

TEST(StoreSort, AKeyIdBeyondTheKeyColumnIsDroppedAndCounted) {
  EventStore s;
  StoreBuilder b(s);
  const StringId small = b.intern("flops");
  for (int i = 0; i < 70000; ++i) b.intern("name" + std::to_string(i));
  const StringId large = b.intern("late key");
  ASSERT_GT(large, 65535u);
  b.stage_int_arg(small, 1);
  b.stage_int_arg(large, 2);
  EventRow row;
  row.name = b.intern("op");
  b.add_event(row);
  b.finish();
  EXPECT_EQ(s.events.args_count[0], 1u);
  EXPECT_EQ(s.arg_int(0, small), 1);
  EXPECT_EQ(s.arg_int(0, large), std::nullopt);
  EXPECT_EQ(s.stats.count(ImportCounter::kDroppedArgs), 1u);
}

}  // namespace
}  // namespace stepscope::trace
