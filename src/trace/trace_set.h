// A set of rank traces: finds the trace files behind the user's inputs
// (folders, files, globs), reads them in parallel, and decides each rank.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "trace/event_store.h"
#include "trace/rank_numbering.h"
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
  std::string error;       // one line naming the file
  std::string error_file;  // that file (or input), for callers that report it apart
  int64_t error_byte = -1; // where in its JSON text, when the error has a place
  TraceSet set;
};

struct ExpandedInputs {
  std::vector<std::string> files;     // sorted by path, each file once
  std::vector<std::string> notes;     // a file named twice ("b: the same file as a, read once")
  std::vector<std::string> warnings;  // folder entries and matches skipped (broken links, unreadable)
  std::string error;                  // one line naming the input, when nothing can be read
};

// Expands inputs: a folder yields its *.json / *.json.gz files (not recursive),
// a pattern with * ? [ is globbed, anything else is a file. Files are sorted
// by path and identified by device and inode, so one file is one rank however
// it is named. A folder entry or pattern match that is a broken link or
// cannot be read is skipped with a warning; an input named directly that
// cannot be found is an error naming it.
ExpandedInputs expand_input_files(const std::vector<std::string>& inputs);
// The files alone (empty, with `error` set, when expansion failed).
std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs, std::string& error);

// Reads every file. A rank without any analysable event (every record
// skipped, or none at all) is dropped with a warning naming its file; when no
// rank is left, that is the error, naming the file(s).
LoadResult load_traces(const std::vector<std::string>& inputs, const ReadOptions& options,
                       unsigned threads = 0);

// The threads ranks are read and analysed on: `requested`, or the cores for 0.
unsigned reading_threads(unsigned requested);

// Why a store holds no analysable event, for the warning that drops it:
// "(no complete 'X' or instant 'i' event kept from traceEvents; ...)".
std::string nothing_analysable(const EventStore& store);

// What a store says about its rank (rank_numbering.h).
RankClaim rank_claim(const EventStore& store);

// Rank from a file name ("rank-3", "rank_3", "rank3", "worker3"), or -1.
int64_t rank_from_file_name(const std::string& path);

}  // namespace stepscope::trace
