// Formats simulated records as Kineto (PyTorch 2.4+) Chrome-trace JSON, in the
// layout the profiler writes: one record per "  {...}" block, microsecond
// times with three decimals (exact nanoseconds), top-level metadata before
// traceEvents and traceName after it. Also tallies what it wrote, so tests
// can check that a reader reads back exactly the same counts and times.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "synthetic/output_sink.h"
#include "synthetic/trace_event.h"

namespace stepscope::synth {

// Totals of what one rank's file holds, keyed by what the JSON says.
struct RankTally {
  struct Bucket {
    uint64_t count = 0;
    int64_t dur_ns = 0;  // sum of "dur" over the bucket's records
  };
  // "X" records by "cat".
  std::map<std::string, Bucket> complete;
  // "i" records by name ("[memory]", "Iteration Start: PyTorch Profiler", ...).
  std::map<std::string, uint64_t> instants;
  // "s"/"f" records by "cat".
  std::map<std::string, uint64_t> flow_starts;
  std::map<std::string, uint64_t> flow_ends;
  uint64_t metadata = 0;  // "M" records
  // Host ProfilerStep#N ranges in step order: (ts, dur) in ns.
  std::vector<std::pair<int64_t, int64_t>> steps;
  int64_t min_ts_ns = INT64_MAX;
  int64_t max_end_ns = INT64_MIN;
  uint64_t bytes = 0;  // uncompressed JSON bytes

  uint64_t events() const;  // "X" + "i" records: what a reader keeps as events
};

struct TraceHeader {
  int rank = 0;
  int world_size = 1;
  int devices = 8;               // deviceProperties entries
  int64_t base_time_ns = 0;      // baseTimeNanoseconds
};

class KinetoWriter {
 public:
  KinetoWriter(OutputSink& sink, RankTally& tally) : sink_(sink), tally_(tally) {}

  void begin(const TraceHeader& header);
  void event(const TraceEvent& e);
  // "M" records naming a process or thread, as Kineto writes at the end.
  void process_metadata(int64_t pid, std::string_view name, std::string_view label, int64_t sort_index,
                        int64_t ts_ns);
  void thread_metadata(int64_t pid, int64_t tid, std::string_view name, int64_t sort_index,
                       int64_t ts_ns);
  // The profiler's own span and the two global instants that close a trace.
  void profiler_span(int64_t ts_ns, int64_t dur_ns, int64_t end_ns);
  void end(std::string_view trace_name);

 private:
  void open_record();
  void flush_if_full();
  void put(std::string_view s) { buf_.append(s); }
  void put_int(int64_t v);
  void put_double(double v);
  void put_time(int64_t ns);  // microseconds with 3 decimals
  void put_string(std::string_view s);
  void count_complete(std::string_view cat, int64_t ts, int64_t dur);

  OutputSink& sink_;
  RankTally& tally_;
  std::string buf_;
  bool first_record_ = true;
  int rank_ = 0;
};

}  // namespace stepscope::synth
