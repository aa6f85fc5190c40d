// Memory over time from a snapshot's recorded history, per device. The
// history is a ring buffer: it may start long after the process did, so the
// level at its start is unknown. It is recovered from the end: the snapshot's
// segments and blocks are the state after the last event, and each event's
// effect is taken back, as PyTorch's memory viewer does.
//
//   allocated: bytes held by tensors: +size at alloc, -size at free_requested
//   active:    allocated plus blocks freed but still in use by a stream:
//              +size at alloc, -size at free_completed
//   reserved:  bytes the caching allocator holds from CUDA: +size at
//              segment_alloc and segment_map, -size at segment_free and
//              segment_unmap
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/snapshot/memory_snapshot.h"

namespace stepscope::memory {

// Levels just after one event (or, for `start`, before the first).
struct MemoryLevels {
  uint64_t allocated = 0, active = 0, reserved = 0;
};

struct TimelinePoint {
  size_t event = 0;      // row in the snapshot's trace (the last event of its bucket)
  int64_t time_us = trace::snapshot::kNoTime;
  MemoryLevels max;      // the highest level of each kind within the bucket
};

struct DeviceTimeline {
  int32_t device = 0;
  size_t first_event = 0, events = 0;  // this device's rows in the trace: [first_event, first_event + events)
  MemoryLevels start, end;             // before the first event, after the last (= the snapshot's state)
  MemoryLevels peak;
  size_t peak_allocated_event = SIZE_MAX, peak_reserved_event = SIZE_MAX;  // SIZE_MAX: the peak is the start
  uint64_t segment_allocs = 0, segment_frees = 0, allocs = 0, frees = 0, ooms = 0;
  // At most `max_points` buckets of consecutive events, for plotting.
  std::vector<TimelinePoint> series;
  // Non-empty when the history does not add up to the snapshot's state (a
  // level would have been negative at the start): levels are then clamped at
  // 0 and only the shape of the curve can be trusted.
  std::string inconsistency;
};

// One timeline per device that has segments or history.
std::vector<DeviceTimeline> snapshot_timelines(const trace::snapshot::MemorySnapshot& s, size_t max_points = 1000);

// The snapshot's state (after its last event) on one device.
MemoryLevels final_levels(const trace::snapshot::MemorySnapshot& s, int32_t device);

}  // namespace stepscope::memory
