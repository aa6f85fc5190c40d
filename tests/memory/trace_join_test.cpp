// A snapshot's history joined with a trace of the same run, on the story of
// tests/data/snapshots/make_snapshots.py and a hand-written trace whose clock
// runs 2.5 ms ahead: the offset is found from the allocations both files
// hold, then each event lands in its step and each allocation in its op.
#include <gtest/gtest.h>

#include "memory/join_fixtures.h"
#include "memory/trace_join.h"
#include "test_paths.h"
#include "trace/snapshot/snapshot_reader.h"

namespace stepscope::memory {
namespace {

using analysis::testing_support::load_inline;
using namespace join_fixtures;

std::unique_ptr<trace::snapshot::MemorySnapshot> story() {
  auto r = trace::snapshot::read_memory_snapshot(stepscope::testing::test_data_dir() + "/snapshots/snapshot_p4.pickle");
  EXPECT_TRUE(r.snapshot) << r.error;
  return std::move(r.snapshot);
}

TEST(TraceJoin, OffsetFromSharedAllocationsThenStepsAndOps) {
  const auto s = story();
  const auto store = load_inline(trace_events(true), kHeader);
  const TraceJoin j = join_trace(*s, 0, *store);
  EXPECT_TRUE(j.aligned_by_allocations) << j.note;
  EXPECT_EQ(j.offset_ns, kAhead);
  EXPECT_EQ(j.votes, 4u);
  EXPECT_EQ(j.matched, 4u);
  EXPECT_EQ(j.in_trace, 9u);
  EXPECT_EQ(j.outside, 0u);
  EXPECT_EQ(j.in_steps, 9u);
  ASSERT_EQ(j.steps.size(), 2u);
  EXPECT_EQ(j.steps[0].step, 1);
  EXPECT_EQ(j.steps[0].allocs, 2u);  // events 1 and 2
  EXPECT_EQ(j.steps[0].alloc_bytes, 12 * MiB);
  EXPECT_EQ(j.steps[0].segment_allocs, 1u);
  EXPECT_EQ(j.steps[1].allocs, 2u);  // events 3 and 7
  EXPECT_EQ(j.steps[1].alloc_bytes, 6 * MiB + 512);
  EXPECT_EQ(j.steps[1].frees, 1u);
  EXPECT_EQ(j.steps[1].segment_allocs, 1u);
  EXPECT_EQ(j.steps[1].ooms, 1u);
  ASSERT_EQ(j.ops.size(), 3u);  // event 7 runs outside any op
  EXPECT_EQ(j.ops[0].op, "aten::mm");  // the innermost op, not model.forward
  EXPECT_EQ(j.ops[0].alloc_bytes, 8 * MiB);
  EXPECT_EQ(j.ops[1].op, "aten::softmax");  // found on the other thread
  EXPECT_EQ(j.ops[1].alloc_bytes, 6 * MiB);
  EXPECT_EQ(j.ops[2].op, "model.forward");
  EXPECT_EQ(j.ops[2].alloc_bytes, 4 * MiB);
}

TEST(TraceJoin, WithoutMemoryEventsTheClocksAreTakenAsEqualAndSaidSo) {
  const auto s = story();
  const auto store = load_inline(trace_events(false), kHeader);
  const TraceJoin j = join_trace(*s, 0, *store);
  EXPECT_FALSE(j.aligned_by_allocations);
  EXPECT_EQ(j.offset_ns, 0);
  EXPECT_NE(j.note.find("profile_memory=True"), std::string::npos);
  // 2.5 ms early, event 1 now falls outside aten::mm but inside model.forward.
  ASSERT_FALSE(j.ops.empty());
  EXPECT_EQ(j.ops[0].op, "model.forward");
}

TEST(TraceJoin, ATraceOfAnotherRunGetsNoEmptyStepTable) {
  // The trace's clock starts an hour after the story: nothing falls in its steps.
  const auto s = story();
  const auto store = load_inline(trace_events(false), R"("baseTimeNanoseconds": 3601000000000)");
  const TraceJoin j = join_trace(*s, 0, *store);
  EXPECT_EQ(j.in_steps, 0u);
  EXPECT_TRUE(j.steps.empty());
  EXPECT_NE(j.note.find("are the files of the same run?"), std::string::npos) << j.note;
}

TEST(TraceJoin, ASnapshotWithoutTimesIsNotJoined) {
  auto r = trace::snapshot::read_memory_snapshot(stepscope::testing::test_data_dir() + "/snapshots/snapshot_v21_p2.pickle");
  ASSERT_TRUE(r.snapshot) << r.error;
  const auto store = load_inline(trace_events(true), kHeader);
  const TraceJoin j = join_trace(*r.snapshot, 0, *store);
  EXPECT_NE(j.note.find("no times"), std::string::npos);
  EXPECT_EQ(j.in_trace, 0u);
  EXPECT_TRUE(j.steps.empty());
}

}  // namespace
}  // namespace stepscope::memory

namespace stepscope::memory {
namespace {

// A loop that allocates the same 4 MiB block every 10 ms: the history has
// 300 steps, the trace the middle 5, its clock 0.3 ms ahead. Every shift by
// whole steps gets as many votes as the true offset; the nearest one wins.
TEST(TraceJoin, AShortTraceInALongPeriodicHistoryFindsTheNearestOffset) {
  trace::snapshot::MemorySnapshot s;
  const uint64_t addr = 0x7F0000000000, size = 4u << 20;
  for (int k = 0; k < 300; ++k)
    for (auto a : {trace::snapshot::TraceAction::kAlloc, trace::snapshot::TraceAction::kFreeCompleted}) {
      s.trace.device.push_back(0);
      s.trace.action.push_back(a);
      s.trace.addr.push_back(addr);
      s.trace.size.push_back(size);
      s.trace.stream.push_back(0);
      s.trace.time_us.push_back(2'000'000 + 10'000 * k + (a == trace::snapshot::TraceAction::kAlloc ? 0 : 5'000));
      s.trace.device_free.push_back(0);
      s.trace.stack.push_back(0);
    }
  std::vector<std::string> ev;
  for (int k = 140; k < 145; ++k) {
    const int64_t t = 1'000'000'000 + 10'000'000LL * k + 300'000;  // ns after the trace's base time (1 s)
    ev.push_back(analysis::testing_support::step(k, t - 1'000'000, 10'000'000));
    ev.push_back(R"({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": )" +
                 analysis::testing_support::us_text(t) + R"(, "args": {"Addr": )" + std::to_string(addr) +
                 R"(, "Bytes": )" + std::to_string(size) + R"(, "Device Id": 0, "Device Type": 1}})");
  }
  const auto store = load_inline(ev, join_fixtures::kHeader);
  const TraceJoin j = join_trace(s, 0, *store);
  EXPECT_TRUE(j.aligned_by_allocations) << j.note;
  EXPECT_EQ(j.offset_ns, 300'000);
  ASSERT_EQ(j.steps.size(), 5u);
  for (const StepAllocations& st : j.steps) {
    EXPECT_EQ(st.allocs, 1u) << st.step;
    EXPECT_EQ(st.frees, 1u) << st.step;
  }
}

}  // namespace
}  // namespace stepscope::memory
