// One rank's summary from its trace file(s): read, analysed as `analyze`
// would analyse that rank, and kept with what the cross-rank half needs to
// number the rank and reproduce the set's notes and warnings.
#pragma once

#include <string>
#include <vector>

#include "diagnose/diagnose_options.h"
#include "summary/rank_summary.h"
#include "trace/trace_reader.h"

namespace stepscope::summary {

struct SummarizeOptions {
  trace::ReadOptions read;
  analysis::AnalysisOptions analysis;  // its timeline hook must be empty (compat modes are not summarized)
  // The file is one of a set (a glob mapped over workers): a file that is
  // not a trace, or has no analysable event, or (with read.salvage) cannot
  // be read, is a summary that carries the note or warning `analyze` gives
  // it in a set, not an error.
  bool member_of_set = false;
  // The name the summary gives the file in place of its path (a worker that
  // copied s3://bucket/rank3.json.gz to a scratch file names the original).
  // Only with member_of_set and a single file; "" = the path.
  std::string display_path;
  // The diagnosis options of the rank's detector parts (its analysis options
  // are `analysis`'s), and the size of the set the rank is one of: a
  // detector falls back on it where the trace records no world size (0: not
  // known; the rank is taken as alone there).
  diagnose::DiagnoseOptions diagnosis;
  size_t ranks_in_set = 0;
};

struct SummarizeResult {
  bool ok = false;
  std::string error;       // one line naming the file
  std::string error_file;  // that file ("" when the error is about the inputs as a whole)
  RankSummary summary;
};

// `inputs` name one rank: one trace file, or the files of one process's
// profiling windows (read as one rank, trace_set.h). A set of several ranks
// is an error naming how many it holds.
SummarizeResult summarize_rank(const std::vector<std::string>& inputs, const SummarizeOptions& options);

// The summary of a file of the set that could not be summarized (`error`,
// one line naming it), when the caller chose to analyse the other ranks: it
// carries the warning `analyze --salvage` gives an unreadable file
// ("dropped <error>"), so the report names the rank left out.
RankSummary unreadable_rank(const std::string& path, const std::string& error, const SummarizeOptions& options);

}  // namespace stepscope::summary
