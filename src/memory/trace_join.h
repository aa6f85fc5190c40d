// A snapshot's history joined with a Kineto trace of the same run: each
// allocator event put in the training step and the CPU op it happened in.
//
// Both files stamp time with the Unix time of PyTorch's approximate clock,
// each with its own calibration. So the offset between them is measured
// before anything is attributed. A trace recorded with profile_memory=True
// holds every allocation as a [memory] event with its address and size; the
// snapshot's alloc entries with the same (address, size) vote for the offset.
// The bins of 20 µs that got nearly the most votes are candidates, and the
// one nearest zero wins: a loop reuses addresses every step, so the true
// offset plus whole steps gets as many votes. The offset is then the median
// of the votes near that bin. A trace without such events is taken at
// offset 0, and the join says so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/event_store.h"
#include "trace/snapshot/memory_snapshot.h"

namespace stepscope::memory {

struct StepAllocations {
  int64_t step = -1;  // N of ProfilerStep#N
  uint64_t allocs = 0, alloc_bytes = 0, frees = 0, segment_allocs = 0, segment_frees = 0, ooms = 0;
};

struct OpAllocations {
  std::string op;  // the innermost CPU op around the allocation (any thread)
  uint64_t allocs = 0, alloc_bytes = 0;
};

struct TraceJoin {
  int32_t device = 0;
  bool aligned_by_allocations = false;  // the offset comes from matched allocations
  int64_t offset_ns = 0;                // trace time - snapshot time
  uint64_t votes = 0, matched = 0;      // allocation pairs that voted, and those within 20 µs of the offset
  std::string note;                     // how the clocks were aligned, or why nothing was attributed
  uint64_t in_trace = 0, outside = 0;   // the device's timed events inside / outside the trace's span
  uint64_t in_steps = 0;                // ... and inside a ProfilerStep
  std::vector<StepAllocations> steps;   // in step order
  std::vector<OpAllocations> ops;       // by allocated bytes, at most top_ops
};

// A snapshot time (µs) on the trace's clock (ns): time_us × 1000 +
// offset_ns, saturating at the int64 limits rather than overflowing (a
// snapshot's time_us is whatever integer the file holds).
inline int64_t snapshot_time_on_trace(int64_t time_us, int64_t offset_ns) {
  int64_t ns;
  if (__builtin_mul_overflow(time_us, int64_t{1000}, &ns)) return time_us > 0 ? INT64_MAX : INT64_MIN;
  int64_t t;
  if (__builtin_add_overflow(ns, offset_ns, &t)) return offset_ns > 0 ? INT64_MAX : INT64_MIN;
  return t;
}

// `store`: one rank's trace, indexes built. Events of `device` only.
TraceJoin join_trace(const trace::snapshot::MemorySnapshot& s, int32_t device, const trace::EventStore& store,
                     size_t top_ops = 20);

}  // namespace stepscope::memory
