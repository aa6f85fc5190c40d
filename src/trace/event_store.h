// The columnar store of one rank's trace. Readers append through
// StoreBuilder; analyses read it through const references and never mutate.
//
// Every time is int64 nanoseconds on the trace's own clock, parsed exactly from
// the decimal text (never through a double). `base_time_ns` is the trace's
// baseTimeNanoseconds (0 when absent): absolute time = base_time_ns + ts_ns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "trace/compact_int_column.h"
#include "trace/event_kind.h"
#include "trace/import_stats.h"
#include "trace/string_table.h"

namespace stepscope::trace {

constexpr int64_t kNone = -1;  // missing correlation / external id / stream

// Per-event provenance bits.
enum EventFlags : uint8_t {
  kStreamFromTid = 1,  // the GPU stream was read from tid ("stream 7"), not args.stream
  kNoDuration = 2,     // the record had no "dur" (instants; an "X" without one gets dur 0)
};

// One column per field; row i of every column is event i. Events are sorted by
// (ts_ns, insertion order) after import, so analyses can sweep in time order.
struct EventColumns {
  std::vector<int64_t> ts_ns;        // start, ns
  CompactInt64Column dur_ns;         // duration, ns (0 for instants); > 2.1 s is a wide value
  std::vector<StringId> name;        // interned event name
  std::vector<StringId> category;    // interned "cat" as written
  std::vector<EventKind> kind;       // classified category
  std::vector<int32_t> pid;          // process id (device id for GPU rows in most traces)
  // Columns of ids are CompactInt64Column: int64 values, 4 bytes per row.
  CompactInt64Column tid;            // thread id; GPU rows: stream ("stream 7" -> 7)
  // args.stream as written (kNone if absent). GPU rows always have one (from
  // tid in 2021 traces, see flags); host rows keep a numeric args.stream only.
  CompactInt64Column stream;
  std::vector<uint8_t> flags;        // EventFlags bits
  std::vector<int16_t> device;       // GPU device ordinal from args.device, kNone if absent or beyond 16 bits
  CompactInt64Column correlation;    // runtime call <-> GPU activity id, kNone if absent
  CompactInt64Column external_id;    // GPU activity / runtime call -> CPU op id, kNone if absent
  std::vector<uint32_t> seq;         // position of the record in traceEvents (file order)
  // This event's arguments are rows [args_begin, args_begin + args_count) of
  // ArgColumns. Arguments stay in file order when events are time-sorted:
  // moving them would need a second copy of the argument table at the
  // store's peak (docs/performance.md).
  std::vector<uint32_t> args_begin;
  std::vector<uint8_t> args_count;   // at most kMaxArgsPerEvent

  size_t size() const { return ts_ns.size(); }
};

// Kept arguments per event (kept_arg_keys() has far fewer keys; only a record
// repeating keys can reach it, and the excess is counted as dropped).
constexpr size_t kMaxArgsPerEvent = 255;

// Arguments that analyses use, in one sparse table (rows per event via
// args_begin / args_count). Only keys listed in kept_arg_keys() are kept; the rest are
// counted in ImportStats so the store stays smaller than the JSON.
enum class ArgType : uint8_t { kInt, kDouble, kString, kJson };

// Every value shares one column (a trace holds millions of arguments, and a
// column per type cost bytes on each): read them through arg_int /
// arg_number / arg_string, which decode by type.
struct ArgColumns {
  // The key's StringId. The reader interns the kept keys before anything
  // else, so their ids are small; 2 bytes hold them (a key id beyond 65535
  // is not stored and counted as a dropped argument).
  std::vector<uint16_t> key;
  std::vector<ArgType> type;
  // kInt: the value; kDouble: the double's bits (std::bit_cast); kString:
  // the StringId of the text; kJson: the StringId of the raw JSON text.
  // 4 bytes for most values (ints and string ids are small); a double's bits
  // or a wide int go to the column's side table.
  CompactInt64Column value;
  size_t size() const { return key.size(); }
};

// A flow arrow ("ph":"s"/"f"): ac2g links a runtime call to its kernel,
// fwdbwd links forward and backward ops.
struct FlowColumns {
  CompactInt64Column id;
  std::vector<StringId> category;
  std::vector<char> phase;   // 's' start, 'f' finish, 't' step
  std::vector<int64_t> ts_ns;
  std::vector<int32_t> pid;
  CompactInt64Column tid;
  size_t size() const { return id.size(); }
};

// Selected top-level trace metadata.
struct DeviceProperties {
  int id = 0;
  std::string name;
  int64_t total_global_mem = 0;  // bytes
  int compute_major = 0;
  int compute_minor = 0;
  int num_sms = 0;
};

struct TraceMetadata {
  std::optional<int64_t> rank;        // distributedInfo.rank
  std::optional<int64_t> world_size;  // distributedInfo.world_size
  std::string backend;                // distributedInfo.backend
  int64_t base_time_ns = 0;           // baseTimeNanoseconds
  std::optional<int64_t> schema_version;
  bool fractional_timestamps = false;  // some "ts" was written with a fraction or exponent
  std::vector<DeviceProperties> devices;
  // (tid, name) from "M" events; a record repeating an id's current name is not added again.
  std::vector<std::pair<int64_t, std::string>> thread_names;
  std::vector<std::pair<int32_t, std::string>> process_names;  // (pid, name), likewise
  // [start, end) ns on this store's clock between windows of one process read
  // as one rank (process_windows.h): nothing was recorded there, so no span
  // counts it as idle. Sorted, disjoint; empty for a store read from one file.
  std::vector<std::pair<int64_t, int64_t>> unrecorded;
  // "stepscope_unprofiled_step_ms": the mean step of the same run measured
  // without the profiler (written by a recorder), ms; absent if not given.
  std::optional<double> unprofiled_step_ms;
};

class EventStore {
 public:
  std::string source_path;  // the file this rank was read from
  int64_t rank = 0;         // resolved rank (distributedInfo, file name, or order)
  std::string rank_source;  // "distributedInfo", "file name" or "order"
  TraceMetadata meta;
  StringTable strings;
  EventColumns events;
  ArgColumns args;
  FlowColumns flows;
  ImportStats stats;

  // Argument lookup for event i; nullopt if the key is absent or of another type.
  std::optional<int64_t> arg_int(size_t i, StringId key) const;
  std::optional<double> arg_number(size_t i, StringId key) const;
  std::optional<std::string_view> arg_string(size_t i, StringId key) const;
  std::string_view name_of(size_t i) const { return strings.get(events.name[i]); }
  // Rows [first, last) of ArgColumns that hold event i's arguments.
  struct ArgRows {
    uint32_t first = 0;
    uint32_t last = 0;
  };
  ArgRows arg_rows(size_t i) const {
    const uint32_t first = events.args_begin[i];
    return {first, first + events.args_count[i]};
  }

  // Joins, built once by build_indexes() after import.
  // Event rows of each kind, in time order.
  std::vector<uint32_t> gpu_rows;      // kernels, memcpy, memset (is_gpu_work)
  std::vector<uint32_t> runtime_rows;  // runtime/driver calls
  std::vector<uint32_t> cpu_op_rows;
  std::vector<uint32_t> step_rows;     // ProfilerStep#N ranges on the host, whatever their category (step_kind)
  // launch -> GPU activity: for each gpu_rows[k], the runtime row with the same
  // correlation id, or UINT32_MAX.
  std::vector<uint32_t> launch_of_gpu;
  // GPU activity -> innermost enclosing CPU op via External id: cpu op row or UINT32_MAX.
  std::vector<uint32_t> cpu_op_of_gpu;

  void build_indexes();

  static constexpr uint32_t kNoRow = UINT32_MAX;
};

}  // namespace stepscope::trace
