// Findings from a PyTorch memory snapshot (memory/snapshot_report.h), in the
// diagnosis's one Finding shape, so `stepscope analyze --memory-snapshot` and
// `stepscope memory` report them like any other cause:
//
//   - out-of-memory errors caused by fragmentation (enough bytes free in
//     total, no block large enough), per device;
//   - out-of-memory errors for lack of memory (capacity);
//   - fragmentation that would cause one: at the peak, the largest request of
//     the history fits neither a cached free block nor the memory left on the
//     device, although the free bytes inside the segments would cover it.
//
// They cost no step time by themselves (saves_time false) and rank by
// severity. Remedies are listed in the order of their effect predicted from
// the snapshot (docs/memory.md, "Findings"): expandable_segments by the
// requests it would have served, a dedicated pool for the site whose
// request sizes vary most, the headroom left for a larger batch.
#pragma once

#include <cstdint>
#include <vector>

#include "diagnose/finding.h"
#include "memory/snapshot_report.h"

namespace stepscope::diagnose {

struct SnapshotFindingsContext {
  int64_t rank = 0;           // the rank the snapshot was taken on (examples name it)
  // Each device's memory, bytes, by CUDA device index (a trace's
  // deviceProperties); absent or 0: unknown (the fragmentation risk is then
  // reported at low severity only).
  std::vector<uint64_t> device_bytes;
  // The joined trace's base_time_ns: example times are put on that trace's
  // clock when the join aligned the clocks (else left at 0).
  int64_t trace_base_time_ns = 0;
};

// Thresholds, each with its reason.
// A fragmentation risk is reported only when the free bytes inside the
// segments at the peak are at least this share of reserved: below it the
// cache is tight and what it lacks is capacity, not contiguity.
inline constexpr double kSnapshotSlackPct = 20.0;

std::vector<Finding> snapshot_findings(const memory::MemoryReport& report, const SnapshotFindingsContext& ctx);

}  // namespace stepscope::diagnose
