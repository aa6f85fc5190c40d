// Active memory over a device's history, split by allocation site: the
// stacked chart of `stepscope memory --html`. The largest sites (by their
// own peak) get a band each, the rest one "other" band; the bands add up to
// the active level of snapshot_timeline.h at every point.
#pragma once

#include <cstdint>
#include <vector>

#include "memory/snapshot_timeline.h"
#include "trace/snapshot/memory_snapshot.h"

namespace stepscope::memory {

struct SiteTimeline {
  // The bands: frame rows of the sites (UINT32_MAX: no stack recorded), then "other".
  std::vector<uint32_t> sites;
  std::vector<uint64_t> site_peaks;  // each site's own peak of active bytes
  // Points at bucket ends: the trace row, its time, and bytes per band
  // (sites.size() + 1 values: the sites, then "other").
  std::vector<size_t> events;
  std::vector<int64_t> time_us;
  std::vector<std::vector<uint64_t>> bytes;
};

// A block freed in the history but allocated before it has no known
// allocating stack: its bytes go to the site of the stack that freed it.
SiteTimeline site_timeline(const trace::snapshot::MemorySnapshot& s, const DeviceTimeline& t, size_t top_sites = 8,
                           size_t max_points = 400);

}  // namespace stepscope::memory
