// What `stepscope memory` reports about one snapshot, computed here and
// rendered by report/memory_*: per device, the timeline's levels and peaks,
// the allocator's state at the peak of allocated memory and at the
// snapshot, and each OOM with its cause. Frame and stack texts are resolved
// here, so the renderers need nothing but this struct.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memory/site_timeline.h"
#include "memory/trace_join.h"
#include "memory/snapshot_state.h"
#include "memory/snapshot_timeline.h"
#include "trace/snapshot/memory_snapshot.h"

namespace stepscope::memory {

struct SiteText {
  std::string site;   // "file:line name" of the allocation site ("(no stack recorded)" without frames)
  std::string stack;  // the example stack, innermost first, " < " between frames
  uint64_t bytes = 0, blocks = 0;
};

struct FreedText {
  size_t event = 0;
  int64_t time_us = trace::snapshot::kNoTime;
  uint64_t bytes = 0;
  std::string site;  // where the freed block was allocated
};

struct StateReport {
  MemoryState state;  // sites and freed_before as rows; the texts below
  std::vector<SiteText> sites;
  std::vector<FreedText> freed_before;
};

enum class OomCause {
  kFragmentation,  // enough bytes free within reach (cached + on the device), no free block large enough
  kCapacity,       // not enough bytes free anywhere
  kOther,          // a cached free block was large enough: another stream's, or the request's pool differs
};
std::string_view oom_cause_name(OomCause c);

struct OomReport {
  size_t event = 0;
  int64_t time_us = trace::snapshot::kNoTime;
  uint64_t requested = 0;    // bytes the failed allocation asked for
  uint64_t device_free = 0;  // bytes CUDA still had free
  // CUDA had room for the request (device_free covers it in whole 2 MiB
  // units), so a per-process limit refused it, not the device:
  // torch.cuda.set_per_process_memory_fraction (or a share the process was
  // held to). Then device_free is out of the process's reach and counts
  // nowhere below.
  bool process_limit = false;
  uint64_t free_in_reach = 0;  // free bytes inside segments, + device_free unless process_limit
  uint64_t largest_free_in_pool = 0;  // the largest free cached block in the request's pool
  OomCause cause = OomCause::kOther;
  // With expandable_segments:True the same request would have fitted: the
  // free whole pages (FreeSpace::free_in_pages) plus device_free (unless
  // process_limit) cover it.
  bool fits_with_expandable = false;
  uint64_t reachable = 0;    // reserved + device_free (unless process_limit): the most this process could have held
  std::string explanation;   // one sentence with the numbers
  StateReport before;        // the state just before the failed request
};

// The allocation site whose large-pool requests (above 1 MiB) vary most in
// size: the candidate for a pool of its own, since blocks of changing sizes
// are what split cached segments into pieces no later request fits.
struct VariableSizeSite {
  std::string site;            // "" when no site made large requests
  uint64_t distinct_sizes = 0; // distinct request sizes above 1 MiB
  uint64_t allocs = 0;         // its allocations above 1 MiB
  uint64_t min_bytes = 0, max_bytes = 0;
};

struct DeviceReport {
  DeviceTimeline timeline;
  SiteTimeline sites;                  // active bytes over time by allocation site
  std::vector<std::string> site_names; // one per band of `sites`, then "other"
  StateReport at_peak;   // at the peak of allocated memory
  StateReport at_end;    // at the snapshot
  std::vector<OomReport> ooms;
  uint64_t largest_request = 0;  // the largest allocation in the device's history, bytes
  VariableSizeSite variable_site;
  bool joined = false;   // a trace was given: `join` holds the attribution
  TraceJoin join;
};

struct MemoryReport {
  std::string file;
  int pickle_protocol = 0;
  uint64_t file_bytes = 0;
  trace::snapshot::AllocatorSettings settings;
  // Expandable segments in use: 1 when the settings say so or any segment is
  // expandable, 0 when the settings say off, -1 unknown (older snapshots).
  int expandable_segments = -1;
  std::vector<DeviceReport> devices;
  std::vector<trace::snapshot::SnapshotWarning> warnings;
  int64_t first_time_us = trace::snapshot::kNoTime;  // the earliest event time (times are shown from here)
  std::string trace_file;  // the trace joined with the history ("" when none)
};

// `trace`: one rank's trace of the same run to join the history with (null: none).
MemoryReport build_memory_report(const trace::snapshot::MemorySnapshot& s, const std::string& file,
                                 size_t top_sites = 20, size_t max_ooms = 20, const trace::EventStore* trace = nullptr,
                                 const std::string& trace_file = "");

}  // namespace stepscope::memory
