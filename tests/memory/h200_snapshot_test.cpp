// A real run: workloads/fragmentation_pool.py on an H200 (PyTorch 2.11,
// default allocator, 8 steps of 63,488 tokens under a 42.5 GB limit set by
// torch.cuda.set_per_process_memory_fraction), its memory snapshot and its
// Kineto trace of steps 0-2 (tests/data/snapshots/h200/README.md). Three
// allocations failed there although the device had about 100 GB free: the
// limit, not the device, refused them, and the cache was fragmented. The
// same setting measured over 200 steps ran out of memory on 104, and with
// expandable_segments:True on none (docs/memory.md).
#include <gtest/gtest.h>

#include <string>

#include "memory/snapshot_report.h"
#include "test_paths.h"
#include "trace/snapshot/snapshot_reader.h"
#include "trace/trace_fixtures.h"

namespace stepscope::memory {
namespace {

constexpr uint64_t MiB = 1 << 20;

std::string h200_file(const char* name) { return stepscope::testing::test_data_dir() + "/snapshots/h200/" + name; }

TEST(H200Snapshot, FragmentationOomsUnderAProcessLimitJoinedWithTheTrace) {
  auto r = trace::snapshot::read_memory_snapshot(h200_file("fragmentation_pool_default.pickle.gz"));
  ASSERT_TRUE(r.snapshot) << r.error;
  trace::EventStore store;
  const trace::ReadOutcome read = stepscope::testing::read(h200_file("fragmentation_pool_default_trace.json.gz"), store);
  ASSERT_TRUE(read.ok) << read.error;
  const MemoryReport rep = build_memory_report(*r.snapshot, "snapshot", 20, 20, &store, "trace");
  ASSERT_EQ(rep.devices.size(), 1u);
  const DeviceReport& d = rep.devices[0];
  EXPECT_EQ(d.timeline.ooms, 3u);
  ASSERT_EQ(d.ooms.size(), 3u);
  for (const OomReport& o : d.ooms) {
    EXPECT_EQ(o.cause, OomCause::kFragmentation) << o.explanation;
    EXPECT_TRUE(o.process_limit) << o.explanation;
    // Only the cache counts: the device's ~100 GB were out of reach.
    EXPECT_EQ(o.free_in_reach, o.before.state.free.free_bytes);
    EXPECT_GT(o.device_free, 100'000 * MiB);
    EXPECT_LT(o.largest_free_in_pool, o.requested);
    EXPECT_GE(o.free_in_reach, o.requested);
    // Whole free 20 MiB pages inside the cache cover the request: what
    // expandable segments would have done, and did over 200 steps.
    EXPECT_TRUE(o.fits_with_expandable);
    EXPECT_EQ(o.reachable, o.before.state.levels.reserved);
    EXPECT_NE(o.explanation.find("set_per_process_memory_fraction"), std::string::npos) << o.explanation;
    EXPECT_EQ(o.explanation.find("were free in total"), std::string::npos) << o.explanation;
  }
  EXPECT_EQ(d.ooms[0].requested, 248 * MiB);
  EXPECT_EQ(d.ooms[0].largest_free_in_pool, 176 * MiB);
  // The join: the clocks aligned by allocations both files hold; steps 0-2
  // of the trace, the first OOM inside step 2.
  ASSERT_TRUE(d.joined);
  EXPECT_TRUE(d.join.aligned_by_allocations) << d.join.note;
  EXPECT_GT(d.join.matched, 1000u);
  ASSERT_EQ(d.join.steps.size(), 3u);
  EXPECT_EQ(d.join.steps[2].ooms, 1u);
  EXPECT_EQ(d.join.steps[0].ooms + d.join.steps[1].ooms, 0u);
  // The variable-size site is a Python line of the model, not PyTorch's
  // capture frames (stacks of the backward have no Python frame).
  EXPECT_NE(d.variable_site.site.find("train_gpt.py"), std::string::npos) << d.variable_site.site;
}

}  // namespace
}  // namespace stepscope::memory
