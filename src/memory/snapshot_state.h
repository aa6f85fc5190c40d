// The allocator's state at chosen points of a snapshot's history on one
// device: which blocks were live (allocated by a tensor, or freed and still
// in use by a stream), which segments the allocator held, and so how much of
// the reserved memory was free and how it was split. Found by taking back the
// recorded events from the snapshot's final state (snapshot_timeline.h).
#pragma once

#include <cstdint>
#include <vector>

#include "memory/snapshot_timeline.h"
#include "trace/snapshot/memory_snapshot.h"

namespace stepscope::memory {

// Free space inside the reserved segments.
struct FreeSpace {
  uint64_t free_bytes = 0;           // reserved - active
  uint64_t largest_free = 0;         // the longest run of free bytes inside one segment
  uint64_t largest_free_large = 0;   // the same within the large pool (requests above 1 MiB)
  uint64_t largest_free_small = 0;   // within the small pool (2 MiB segments, requests up to 1 MiB)
  uint64_t segments = 0;             // reserved ranges (an expandable segment's mapped pieces count apiece)
  uint64_t empty_segments = 0;       // segments with no live block: empty_cache would give them back
  // Free bytes in whole pages of an expandable segment (20 MiB in the large
  // pool, 2 MiB in the small; counted from each segment's start): what the
  // allocator could unmap and map again where a request needs it, had the
  // run used expandable_segments:True (kExpandablePage*).
  uint64_t free_in_pages = 0;
  // 1 - largest_free / free_bytes: 0 when all free bytes are one run, near 1
  // when they are scattered in small pieces (0 when nothing is free).
  double fragmentation() const;
};

// The page of an expandable segment, by pool (c10 kLargeBuffer, kSmallBuffer):
// expandable segments map and unmap memory in these units.
inline constexpr uint64_t kExpandablePageLarge = 20ull << 20;
inline constexpr uint64_t kExpandablePageSmall = 2ull << 20;
// Requests above this many bytes are served from the large pool (c10 kSmallSize).
inline constexpr uint64_t kSmallRequest = 1ull << 20;
// The segment c10 asks cudaMalloc for to serve `requested` bytes
// (get_allocation_size): a small-pool segment (kSmallBuffer, 2 MiB) for a
// small request, a 20 MiB one (kLargeBuffer) below kMinLargeAlloc (10 MiB),
// else the request rounded up to whole 2 MiB (kRoundLarge).
inline constexpr uint64_t segment_for_request(uint64_t requested) {
  constexpr uint64_t kSmallBuffer = 2ull << 20, kLargeBuffer = 20ull << 20, kMinLargeAlloc = 10ull << 20,
                     kRoundLarge = 2ull << 20;
  if (requested <= kSmallRequest) return kSmallBuffer;
  if (requested < kMinLargeAlloc) return kLargeBuffer;
  return (requested + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

// Live bytes grouped by where they were allocated.
struct AllocationSite {
  uint32_t frame = UINT32_MAX;  // the site frame (snapshot frames row); UINT32_MAX: no stack recorded
  uint32_t stack = 0;           // one full stack that allocated here (the largest block's)
  uint64_t bytes = 0, blocks = 0;
};

struct MemoryState {
  size_t applied = 0;       // the state after this many of the device's events (all of them: the snapshot)
  size_t event = SIZE_MAX;  // the trace row of the last event applied; SIZE_MAX when none was
  int64_t time_us = trace::snapshot::kNoTime;  // that event's time
  MemoryLevels levels;
  FreeSpace free;
  std::vector<AllocationSite> sites;  // the largest first, at most top_sites
  std::vector<size_t> freed_before;   // the latest free_completed rows before the point, latest first
  std::vector<uint32_t> freed_alloc_stack;  // for each: the stack of the alloc that made the block (0: before the history)
  uint64_t inconsistent_events = 0;   // events that contradict the state (counted, not applied)
};

// States after the first `applied[i]` events of `device`'s history (0: before
// any; the number of events, or more: the snapshot's final state), in the
// order asked.
std::vector<MemoryState> memory_states_after(const trace::snapshot::MemorySnapshot& s, int32_t device,
                                             const std::vector<size_t>& applied, size_t top_sites = 20,
                                             size_t recent_frees = 10);

// The frame that stands for a stack's allocation site: the innermost frame
// outside PyTorch itself and outside compiled code (a path through /torch/ or
// site-packages/, with / or \\ as separators, a C/C++/CUDA source such as CPython's own Objects/*.c,
// "??"). When all are (the backward's allocations on the autograd engine's
// threads have no Python frame), the innermost frame naming an operation:
// a derivative formula (torch::autograd::generated::), else an ATen
// operator entry (at::_ops::), else the innermost frame. UINT32_MAX for an
// empty stack.
uint32_t allocation_site(const trace::snapshot::MemorySnapshot& s, uint32_t stack);
// allocation_site of every stack, by stack row.
std::vector<uint32_t> allocation_sites(const trace::snapshot::MemorySnapshot& s);

}  // namespace stepscope::memory
