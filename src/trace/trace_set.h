// A set of rank traces: finds the trace files behind the user's inputs
// (folders, files, globs), reads them in parallel, and decides each rank.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "trace/event_store.h"
#include "trace/trace_reader.h"

namespace stepscope::trace {

struct TraceSet {
  std::vector<std::unique_ptr<EventStore>> ranks;  // sorted by rank
  std::vector<std::string> notes;     // skipped files and other information
  std::vector<std::string> warnings;  // salvaged or dropped data
  uint64_t uncompressed_bytes = 0;
  uint64_t file_bytes = 0;
};

struct LoadResult {
  bool ok = false;
  std::string error;  // one line naming the file
  TraceSet set;
};

// Expands inputs: a folder yields its *.json / *.json.gz files (not recursive),
// a pattern with * ? [ is globbed, anything else is a file. Sorted, de-duplicated.
std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs, std::string& error);

LoadResult load_traces(const std::vector<std::string>& inputs, const ReadOptions& options,
                       unsigned threads = 0);

// The threads ranks are read and analysed on: `requested`, or the cores for 0.
unsigned reading_threads(unsigned requested);

// Rank from a file name ("rank-3", "rank_3", "rank3", "worker3"), or -1.
int64_t rank_from_file_name(const std::string& path);

}  // namespace stepscope::trace
