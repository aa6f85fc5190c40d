// HTA's per-rank event frame (docs/hta_compat.md §1): what HTA 0.6.1 keeps of
// each trace and in which order, built from the EventStore. Every HTA-compat
// analysis reads only this.
//
// What the builder reproduces, in order:
//   * rank = distributedInfo.rank, else 0 (HTA scans the text for the first
//     `"rank":\s+N`, see docs/hta_compat.md §11); duplicate ranks: the
//     file that sorts last wins;
//   * frame order = record order in traceEvents (EventStore::events.seq);
//   * HTA's µs rounding when any "ts" had a fraction: ts = ceil(ts),
//     end = floor(ts + dur), dur = end - ts, all in IEEE double on the µs
//     values (so sub-µs events can get dur = -1);
//   * drops: records without "dur", without "cat", or with cat "Trace";
//   * args: stream (-1 when absent or taken from tid), correlation, bandwidth;
//   * index_correlation: the launch <-> GPU activity link by traceEvents index;
//   * alignment: the earliest ts over all ranks is subtracted;
//   * the step filter when two or more ProfilerStep names exist: only host
//     events before the last step start, and the GPU-like events whose
//     correlation matches one of them (an inner join: repeated per match).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/hta_compat/kernel_type.h"
#include "trace/event_store.h"

namespace stepscope::analysis::hta {

// One row of HTA's frame. Times are µs, as HTA holds them.
struct HtaEvent {
  double ts = 0;                   // start, µs since the earliest kept event of all ranks
  double dur = 0;                  // duration, µs (-1 possible after HTA's rounding)
  int64_t index = 0;               // position of the record in traceEvents
  int64_t index_correlation = -1;  // traceEvents index of the linked launch / GPU activity; 0 or -1 when none
  int64_t stream = -1;             // args.stream as an integer; -1 when absent (never taken from tid)
  int64_t correlation = -1;        // args.correlation; -1 when absent
  double memory_bw_gbps = 0;       // args["memory bandwidth (GB/s)"]; 0 when absent
  uint32_t row = 0;                // the event's row in its rank's EventStore
  trace::StringId name = 0;        // interned in the rank's store
  trace::StringId category = 0;    // interned in the rank's store
  HtaKernelType type = HtaKernelType::kOther;  // classify_hta_kernel(name, category, release)
  bool gpu_like = false;           // (stream >= 0 and correlation >= 0) or an Event/Context Sync
  bool kernel_category = false;    // cat is one HTA's idle breakdown counts (kernel, gpu_memcpy, ...)

  double end() const { return ts + dur; }
  bool on_stream() const { return stream != -1; }  // what HTA calls a kernel: any row with a stream
};

struct HtaRankFrame {
  const trace::EventStore* store = nullptr;
  HtaRelease release = HtaRelease::k0_6_1;  // whose rules the frame and its analyses follow
  int64_t rank = 0;                 // HTA's rank id
  std::vector<HtaEvent> events;     // HTA's frame, in HTA's row order
  bool rounded = false;             // HTA's µs rounding was applied to this trace
  int64_t dropped_records = 0;      // store rows HTA drops (no dur, no cat, cat "Trace")
  int64_t negative_durations = 0;   // frame rows on a stream whose duration is negative after rounding

  std::string_view name_of(const HtaEvent& e) const { return store->strings.get(e.name); }
  std::string_view category_of(const HtaEvent& e) const { return store->strings.get(e.category); }
};

struct HtaFrames {
  std::vector<HtaRankFrame> ranks;          // sorted by rank
  std::vector<std::string> profiler_steps;  // N of every ProfilerStep#N left in the frames, ascending
  bool step_filter_applied = false;         // two or more ProfilerStep names existed
  int64_t origin_us = 0;                    // the earliest kept start of all ranks (µs, trace clock): ts 0
  std::vector<std::string> notes;           // differences from HTA's input handling worth telling
};

// Builds HTA's frames for one run over these traces (one per rank file).
HtaFrames build_hta_frames(const std::vector<const trace::EventStore*>& stores,
                           HtaRelease release = HtaRelease::k0_6_1);

}  // namespace stepscope::analysis::hta
