// Trace files written by one process (a profiler that exported several
// windows, e.g. torch.profiler's schedule with repeat > 1 and
// tensorboard_trace_handler, which writes one file per window) are one rank,
// not several: told apart from files of different ranks, then merged into
// one store in time order.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trace/event_store.h"

namespace stepscope::trace {

// What identifies the process that wrote a trace file.
struct ProcessIdentity {
  int32_t pid = 0;                     // pid of the host rows (ops, annotations, runtime calls); the most common one
  std::string process_name;            // "process_name" metadata of that pid ("" when absent)
  std::optional<int64_t> rank;         // distributedInfo.rank
  int64_t first_ns = 0;                // earliest event start, absolute ns (base_time_ns + ts_ns)
  int64_t last_ns = 0;                 // latest event end, absolute ns
};

// The identity of a store's process; nullopt when it has no host row.
std::optional<ProcessIdentity> process_identity(const EventStore& store);

// True when `later` can be a later window of the process that wrote
// `earlier`: the same host pid and the same process name (both present), the
// same distributedInfo rank or none on both, and `later` starting at or after
// `earlier`'s last event ends (a process records one window at a time;
// concurrent ranks overlap, even when containers give each of them pid 1).
bool same_process_later_window(const ProcessIdentity& earlier, const ProcessIdentity& later);

// Appends `later` (a later window, see above) to `into`: strings re-interned,
// times moved onto `into`'s base time, correlation / External ids and flow
// ids offset past `into`'s so the windows' joins stay apart, arguments,
// flows, metadata and import counters carried over; then the joins are
// rebuilt. The rows stay in time order because `later` starts after `into`
// ends.
void append_window(EventStore& into, const EventStore& later);

// Groups the stores by process (files of one process become one store, the
// earliest file's, with the others appended) and returns one note per merge:
// "a.json and b.json are one process (pid N): read as one rank". Only stores
// with ProfilerStep#N markers are merged (the steps are the windows' unit;
// without them the whole GPU span is one window, which would run across the
// time between the files), and never a salvaged (cut) one: the cut would sit
// inside the merged rank. The time between the windows is recorded in
// meta.unrecorded.
std::vector<std::string> merge_process_windows(std::vector<std::unique_ptr<EventStore>>& stores);

}  // namespace stepscope::trace
