#include "memory/snapshot_timeline.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace stepscope::memory {

using trace::snapshot::BlockState;
using trace::snapshot::MemorySnapshot;
using trace::snapshot::TraceAction;

namespace {

// Signed change of each level an event makes.
struct Delta {
  int64_t allocated = 0, active = 0, reserved = 0;
};
Delta delta_of(TraceAction a, uint64_t size) {
  const auto s = static_cast<int64_t>(size);
  switch (a) {
    case TraceAction::kAlloc: return {s, s, 0};
    case TraceAction::kFreeRequested: return {-s, 0, 0};
    case TraceAction::kFreeCompleted: return {0, -s, 0};
    case TraceAction::kSegmentAlloc:
    case TraceAction::kSegmentMap: return {0, 0, s};
    case TraceAction::kSegmentFree:
    case TraceAction::kSegmentUnmap: return {0, 0, -s};
    default: return {};
  }
}

// A segment without a device (PyTorch 2.1 files) belongs to device 0, the
// only device such files were taken on in practice.
int32_t device_of_segment(const MemorySnapshot& s, size_t g) { return s.segments.device[g] < 0 ? 0 : s.segments.device[g]; }

}  // namespace

MemoryLevels final_levels(const MemorySnapshot& s, int32_t device) {
  MemoryLevels l;
  for (size_t g = 0; g < s.segments.rows(); ++g)
    if (device_of_segment(s, g) == device) l.reserved += s.segments.total_size[g];
  for (size_t b = 0; b < s.blocks.rows(); ++b) {
    if (device_of_segment(s, s.blocks.segment[b]) != device) continue;
    if (s.blocks.state[b] == BlockState::kActiveAllocated) l.allocated += s.blocks.size[b];
    if (s.blocks.state[b] == BlockState::kActiveAllocated || s.blocks.state[b] == BlockState::kActivePendingFree)
      l.active += s.blocks.size[b];
  }
  return l;
}

std::vector<DeviceTimeline> snapshot_timelines(const MemorySnapshot& s, size_t max_points) {
  std::map<int32_t, DeviceTimeline> by_device;
  for (size_t g = 0; g < s.segments.rows(); ++g) by_device[device_of_segment(s, g)].device = device_of_segment(s, g);
  // Trace rows of one device are contiguous (device_traces[d] in order).
  for (size_t e = 0; e < s.trace.rows();) {
    const int32_t d = s.trace.device[e];
    size_t end = e;
    while (end < s.trace.rows() && s.trace.device[end] == d) ++end;
    DeviceTimeline& t = by_device[d];
    t.device = d;
    t.first_event = e;
    t.events = end - e;
    e = end;
  }
  std::vector<DeviceTimeline> out;
  for (auto& [device, t] : by_device) {
    t.end = final_levels(s, device);
    // Levels before the first event: the end minus every event's change.
    int64_t a = static_cast<int64_t>(t.end.allocated), act = static_cast<int64_t>(t.end.active),
            r = static_cast<int64_t>(t.end.reserved);
    for (size_t e = t.first_event; e < t.first_event + t.events; ++e) {
      const Delta d = delta_of(s.trace.action[e], s.trace.size[e]);
      a -= d.allocated, act -= d.active, r -= d.reserved;
      switch (s.trace.action[e]) {
        case TraceAction::kSegmentAlloc: ++t.segment_allocs; break;
        case TraceAction::kSegmentFree: ++t.segment_frees; break;
        case TraceAction::kAlloc: ++t.allocs; break;
        case TraceAction::kFreeCompleted: ++t.frees; break;
        case TraceAction::kOom: ++t.ooms; break;
        default: break;
      }
    }
    if (a < 0 || act < 0 || r < 0) {
      t.inconsistency = fmt::format(
          "the recorded history does not add up to the snapshot's state on device {} (the levels at its start would "
          "be {} allocated, {} active, {} reserved bytes); levels are clamped at 0",
          device, a, act, r);
    }
    t.start = {static_cast<uint64_t>(std::max<int64_t>(a, 0)), static_cast<uint64_t>(std::max<int64_t>(act, 0)),
               static_cast<uint64_t>(std::max<int64_t>(r, 0))};
    t.peak = t.start;
    const size_t per_bucket = std::max<size_t>(1, (t.events + max_points - 1) / std::max<size_t>(max_points, 1));
    TimelinePoint bucket;
    for (size_t k = 0; k < t.events; ++k) {
      const size_t e = t.first_event + k;
      const Delta d = delta_of(s.trace.action[e], s.trace.size[e]);
      a += d.allocated, act += d.active, r += d.reserved;
      const MemoryLevels now{static_cast<uint64_t>(std::max<int64_t>(a, 0)),
                             static_cast<uint64_t>(std::max<int64_t>(act, 0)),
                             static_cast<uint64_t>(std::max<int64_t>(r, 0))};
      if (now.allocated > t.peak.allocated) t.peak.allocated = now.allocated, t.peak_allocated_event = e;
      if (now.reserved > t.peak.reserved) t.peak.reserved = now.reserved, t.peak_reserved_event = e;
      t.peak.active = std::max(t.peak.active, now.active);
      if (k % per_bucket == 0) bucket = TimelinePoint{};
      bucket.max.allocated = std::max(bucket.max.allocated, now.allocated);
      bucket.max.active = std::max(bucket.max.active, now.active);
      bucket.max.reserved = std::max(bucket.max.reserved, now.reserved);
      bucket.event = e;
      bucket.time_us = s.trace.time_us[e];
      if (k % per_bucket == per_bucket - 1 || k + 1 == t.events) t.series.push_back(bucket);
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace stepscope::memory
