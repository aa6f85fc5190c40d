// The snapshot analyses on the synthetic story of
// tests/data/snapshots/make_snapshots.py, whose every level is known.
#include <gtest/gtest.h>

#include "memory/site_timeline.h"
#include "memory/snapshot_state.h"
#include "memory/snapshot_timeline.h"
#include "test_paths.h"
#include "trace/snapshot/snapshot_reader.h"

namespace stepscope::memory {
namespace {

using trace::snapshot::MemorySnapshot;
constexpr uint64_t MiB = 1 << 20;

std::unique_ptr<MemorySnapshot> story(const char* name = "snapshot_p4.pickle") {
  auto r = trace::snapshot::read_memory_snapshot(testing::test_data_dir() + "/snapshots/" + name);
  EXPECT_TRUE(r.snapshot) << r.error;
  return std::move(r.snapshot);
}

std::string frame_of(const MemorySnapshot& s, uint32_t f) {
  return std::string(s.strings.get(s.frames.filename[f])) + ":" + std::string(s.strings.get(s.frames.name[f]));
}

TEST(SnapshotTimeline, LevelsPeaksAndCountsOfTheStory) {
  for (const char* name : {"snapshot_p4.pickle", "snapshot_v21_p2.pickle"}) {
    SCOPED_TRACE(name);
    const auto s = story(name);
    const auto timelines = snapshot_timelines(*s);
    ASSERT_EQ(timelines.size(), 1u);
    const DeviceTimeline& t = timelines[0];
    EXPECT_EQ(t.device, 0);
    EXPECT_EQ(t.events, 9u);
    EXPECT_EQ(t.end.reserved, 22 * MiB);
    EXPECT_EQ(t.end.allocated, 12 * MiB + 512);
    EXPECT_EQ(t.start.allocated, 0u);  // the history starts from an empty device
    EXPECT_EQ(t.start.reserved, 0u);
    EXPECT_TRUE(t.inconsistency.empty()) << t.inconsistency;
    EXPECT_EQ(t.peak.allocated, 18 * MiB);  // the 6 MiB softmax buffer on top of 12 MiB
    EXPECT_EQ(t.peak_allocated_event, 3u);
    EXPECT_EQ(t.peak.reserved, 22 * MiB);
    EXPECT_EQ(t.peak_reserved_event, 6u);
    EXPECT_EQ(t.segment_allocs, 2u);
    EXPECT_EQ(t.allocs, 4u);
    EXPECT_EQ(t.frees, 1u);
    EXPECT_EQ(t.ooms, 1u);
    ASSERT_EQ(t.series.size(), 9u);
    EXPECT_EQ(t.series[3].max.allocated, 18 * MiB);
    EXPECT_EQ(t.series[4].max.allocated, 12 * MiB);  // free_requested
    EXPECT_EQ(t.series[4].max.active, 18 * MiB);     // still in use until free_completed
    EXPECT_EQ(t.series[5].max.active, 12 * MiB);
  }
}

TEST(SnapshotTimeline, SeriesBucketsKeepTheMaximum) {
  const auto s = story();
  const auto t = snapshot_timelines(*s, 4)[0];
  ASSERT_EQ(t.series.size(), 3u);  // 9 events in buckets of 3
  EXPECT_EQ(t.series[0].max.allocated, 12 * MiB);
  EXPECT_EQ(t.series[1].max.allocated, 18 * MiB);
  EXPECT_EQ(t.series[2].max.reserved, 22 * MiB);
  EXPECT_EQ(t.series[2].event, 8u);
}

TEST(SnapshotTimeline, AHistoryThatDoesNotAddUpIsSaid) {
  auto s = story();
  s->trace.size[1] = 100 * MiB;  // an alloc larger than anything the final state holds
  const auto t = snapshot_timelines(*s)[0];
  EXPECT_NE(t.inconsistency.find("does not add up"), std::string::npos);
  EXPECT_EQ(t.start.allocated, 0u);  // clamped, not wrapped around
}

TEST(SnapshotState, StatesAtThePeakAndAtTheOom) {
  const auto s = story();
  const auto states = memory_states_after(*s, 0, {9, 4, 6, 100});
  ASSERT_EQ(states.size(), 4u);
  // At the OOM (the last event): the final state.
  const MemoryState& oom = states[0];
  EXPECT_EQ(oom.levels.reserved, 22 * MiB);
  EXPECT_EQ(oom.levels.allocated, 12 * MiB + 512);
  EXPECT_EQ(oom.free.free_bytes, 10 * MiB - 512);
  EXPECT_EQ(oom.free.largest_free, 8 * MiB);
  EXPECT_EQ(oom.free.largest_free_large, 8 * MiB);
  EXPECT_EQ(oom.free.largest_free_small, 2 * MiB - 512);
  EXPECT_EQ(oom.free.segments, 2u);
  EXPECT_EQ(oom.free.empty_segments, 0u);
  EXPECT_NEAR(oom.free.fragmentation(), 1.0 - 8.0 / (10.0 - 512.0 / MiB), 1e-12);
  EXPECT_EQ(oom.time_us, 1'008'000);
  EXPECT_EQ(oom.event, 8u);
  EXPECT_EQ(oom.applied, 9u);
  ASSERT_EQ(oom.freed_before.size(), 1u);
  EXPECT_EQ(oom.freed_before[0], 5u);
  // At the peak of allocated memory (after the 6 MiB alloc): three live
  // blocks, two of them from softmax; the small segment does not exist yet.
  const MemoryState& peak = states[1];
  EXPECT_EQ(peak.levels.allocated, 18 * MiB);
  EXPECT_EQ(peak.levels.reserved, 20 * MiB);
  EXPECT_EQ(peak.free.largest_free, 2 * MiB);
  EXPECT_EQ(peak.free.segments, 1u);
  ASSERT_EQ(peak.sites.size(), 2u);
  EXPECT_EQ(frame_of(*s, peak.sites[0].frame), "attn.py:softmax");
  EXPECT_EQ(peak.sites[0].bytes, 10 * MiB);
  EXPECT_EQ(peak.sites[0].blocks, 2u);
  EXPECT_EQ(frame_of(*s, peak.sites[1].frame), "model.py:forward");
  EXPECT_TRUE(peak.freed_before.empty());
  EXPECT_EQ(peak.inconsistent_events, 0u);
  // After the 6 MiB block went back: active back to 12 MiB.
  EXPECT_EQ(states[2].levels.active, 12 * MiB);
  EXPECT_EQ(states[3].levels.reserved, 22 * MiB);
  EXPECT_EQ(states[3].applied, 9u);  // more than the history: the final state
  // Before any event: nothing reserved, nothing live.
  const MemoryState start = memory_states_after(*s, 0, {0})[0];
  EXPECT_EQ(start.levels.reserved, 0u);
  EXPECT_EQ(start.levels.active, 0u);
  EXPECT_EQ(start.event, SIZE_MAX);
  EXPECT_EQ(start.inconsistent_events, 0u);
}

TEST(SnapshotState, AllocationSiteSkipsPyTorchAndNativeFrames) {
  auto s = story();
  // A stack as record_context_cpp gives it: C++ and torch frames inside user code.
  const auto file = [&](const char* f) { return s->strings.intern(f); };
  const uint32_t first = static_cast<uint32_t>(s->frames.rows());
  for (const char* f : {"??", "c10/cuda/CUDACachingAllocator.cpp", "/usr/lib/python3/site-packages/torch/nn/functional.py",
                        "/home/me/train.py"}) {
    s->frames.filename.push_back(file(f));
    s->frames.name.push_back(file("fn"));
    s->frames.line.push_back(1);
  }
  const uint32_t stack = static_cast<uint32_t>(s->stacks.rows());
  for (uint32_t f = first; f < first + 4; ++f) s->stacks.frames.push_back(f);
  s->stacks.offsets.push_back(static_cast<uint32_t>(s->stacks.frames.size()));
  EXPECT_EQ(allocation_site(*s, stack), first + 3);
  EXPECT_EQ(allocation_site(*s, 0), UINT32_MAX);
}

// c10's get_allocation_size: what a failed request would have asked
// cudaMalloc for (the process-limit test of an OOM compares device_free with it).
TEST(SnapshotState, SegmentForARequestFollowsC10) {
  constexpr uint64_t KiB = 1 << 10;
  EXPECT_EQ(segment_for_request(512), 2 * MiB);
  EXPECT_EQ(segment_for_request(1 * MiB), 2 * MiB);
  EXPECT_EQ(segment_for_request(1 * MiB + 512), 20 * MiB);
  EXPECT_EQ(segment_for_request(10 * MiB - 512), 20 * MiB);
  EXPECT_EQ(segment_for_request(10 * MiB), 10 * MiB);
  EXPECT_EQ(segment_for_request(248 * MiB + 512 * KiB), 250 * MiB);
}

// Stacks with no Python frame, as PyTorch 2.11 records them on the autograd
// engine's thread (the frames' names from an H200 snapshot of
// workloads/fragmentation_pool.py): the capture, the allocator, the empty
// helpers and the dispatcher are passed over for the operation.
TEST(SnapshotState, AStackWithoutPythonFramesNamesItsOperation) {
  auto s = story();
  auto add_stack = [&](std::initializer_list<std::pair<const char*, const char*>> frames) {
    const uint32_t stack = static_cast<uint32_t>(s->stacks.rows());
    for (const auto& [file, name] : frames) {
      s->frames.filename.push_back(s->strings.intern(file));
      s->frames.name.push_back(s->strings.intern(name));
      s->frames.line.push_back(0);
      s->stacks.frames.push_back(static_cast<uint32_t>(s->frames.rows() - 1));
    }
    s->stacks.offsets.push_back(static_cast<uint32_t>(s->stacks.frames.size()));
    return stack;
  };
  auto name_of_site = [&](uint32_t stack) { return std::string(s->strings.get(s->frames.name[allocation_site(*s, stack)])); };
  const std::pair<const char*, const char*> capture[] = {
      {"??", "torch::unwind::unwind()"},
      {"??", "torch::CapturedTraceback::gather(bool, bool, bool)"},
      {"CUDACachingAllocator.cpp", "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(unsigned long, CUstream_st*)"},
      {"??", "at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)"}};
  const uint32_t backward = add_stack({capture[0], capture[1], capture[2], capture[3],
                                       {"??", "at::_ops::mm::call(at::Tensor const&, at::Tensor const&)"},
                                       {"", "at::Tensor torch::autograd::generated::details::mm_mat2_backward(at::Tensor const&)"},
                                       {"??", "torch::autograd::generated::MmBackward0::apply(std::vector<at::Tensor>&&)"},
                                       {"??", "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)"}});
  EXPECT_EQ(name_of_site(backward), "at::Tensor torch::autograd::generated::details::mm_mat2_backward(at::Tensor const&)");
  const uint32_t reduce = add_stack({capture[0], capture[1], capture[2], capture[3],
                                     {"??", "at::_ops::sum_dim_IntList::redispatch(c10::DispatchKeySet, at::Tensor const&)"},
                                     {"??", "at::_ops::sum_dim_IntList::call(at::Tensor const&)"},
                                     {"??", "torch::autograd::InputMetadata::reduce_grad(at::Tensor&) const"}});
  EXPECT_EQ(name_of_site(reduce), "at::_ops::sum_dim_IntList::redispatch(c10::DispatchKeySet, at::Tensor const&)");
  const uint32_t bare = add_stack({capture[0], capture[1], capture[2]});
  EXPECT_EQ(name_of_site(bare), "torch::unwind::unwind()");
}

}  // namespace
}  // namespace stepscope::memory

namespace stepscope::memory {
namespace {

TEST(SiteTimeline, BandsAddUpToTheActiveLevel) {
  for (const char* name : {"snapshot_p4.pickle", "fragmented_p4.pickle"}) {
    SCOPED_TRACE(name);
    const auto s = story(name);
    const DeviceTimeline t = snapshot_timelines(*s)[0];
    const SiteTimeline st = site_timeline(*s, t, 8, 1000);
    ASSERT_EQ(st.events.size(), t.events);  // one point per event
    for (size_t k = 0; k < st.events.size(); ++k) {
      uint64_t sum = 0;
      for (uint64_t b : st.bytes[k]) sum += b;
      EXPECT_EQ(sum, t.series[k].max.active) << k;  // buckets of one event: the level itself
    }
  }
  const auto s = story();
  const SiteTimeline st = site_timeline(*s, snapshot_timelines(*s)[0], 2, 1000);
  ASSERT_EQ(st.sites.size(), 2u);  // softmax (10 MiB at its peak), forward (8 MiB); collate goes to other
  EXPECT_EQ(frame_of(*s, st.sites[0]), "attn.py:softmax");
  EXPECT_EQ(st.site_peaks[0], 10 * MiB);
  EXPECT_EQ(frame_of(*s, st.sites[1]), "model.py:forward");
  EXPECT_EQ(st.bytes[3][0], 10 * MiB);  // after the 6 MiB softmax alloc
  EXPECT_EQ(st.bytes[5][0], 4 * MiB);   // after its free completed
  EXPECT_EQ(st.bytes[8][2], 512u);      // collate, in "other"
}

}  // namespace
}  // namespace stepscope::memory
