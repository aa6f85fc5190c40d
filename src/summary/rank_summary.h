// What one rank's trace leaves for the cross-rank half of `stepscope
// analyze`: the rank's analyses, where they came from and what reading the
// files said. `stepscope summarize` writes one per rank (summary_file.h);
// `stepscope merge` and the distributed analysis numbers the ranks and runs
// the cross-rank analyses over them (pipeline/merge_run.h), the same way
// `analyze` does over the stores it read itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/analysis_options.h"
#include "analysis/rank_analysis.h"
#include "diagnose/rank_parts.h"
#include "trace/process_windows.h"

namespace stepscope::summary {

// What became of the file(s) behind a summary: a rank, or nothing analysable
// (the same note or warning `analyze` gives such a file in a set).
enum class SummaryKind : uint8_t {
  kRank,     // an analysed rank
  kSkipped,  // not a trace (valid JSON without traceEvents): a note
  kDropped,  // unreadable under --salvage, or no analysable event: a warning
};
inline constexpr int kSummaryKindCount = 3;

// The settings a summary was made with; summaries merge only when these are equal.
struct SummarySettings {
  analysis::AnalysisOptions analysis;  // the thresholds and list lengths of the analyses (no timeline hook)
  bool salvage = false;                // --salvage: damaged files kept up to the damage
  // The diagnosis options the detectors' parts were collected with
  // (summary_json.h: diagnosis_settings, the fields of DiagnoseOptions that
  // a rank's part depends on).
  nlohmann::json diagnosis = nlohmann::json::object();
};

struct RankSummary {
  // The stepscope that made it: a merge takes only its own version's summaries
  // (an analysis may change meaning between versions without the format changing).
  std::string tool_version;
  SummaryKind kind = SummaryKind::kRank;
  SummarySettings settings;
  std::vector<std::string> files;     // the trace files read, by path (several: windows of one process)
  uint64_t uncompressed_bytes = 0;    // JSON text read, B
  uint64_t file_bytes = 0;            // bytes on disk, B
  std::vector<std::string> notes;     // as analyze's set notes for these files ("skipped ...", windows merged)
  std::vector<std::string> warnings;  // as analyze's set warnings for these files ("salvaged ...", "dropped ...")
  // Rank identity (kRank only). The rank is numbered when the set is known:
  // distributedInfo, then the file name, then the order of the files
  // (trace_set.h); the summary keeps what each source says.
  std::optional<int64_t> declared_rank;  // distributedInfo.rank (>= 0)
  int64_t file_name_rank = -1;           // from the file name, -1 when it gives none
  std::optional<trace::ProcessIdentity> process;  // the process that wrote the trace (two summaries of one process are refused)
  analysis::RankAnalysis analysis;       // every per-rank analysis (rank numbered as if alone)
  // Every detector's part of the rank (diagnose/rank_parts.h), keyed by
  // detector name, as one encoded CBOR item (empty: a summary without a
  // rank). Kept encoded until the parts are used (summary_json.h:
  // diagnosis_parts): decoded with the rest, they took the merge of 16,384
  // summaries to 37-40 s (2.3 GiB kept as trees), past its 30 s target.
  std::vector<uint8_t> diagnosis;
  // What the set's diagnosis reports of this rank besides the findings
  // (diagnose/rank_parts.h): its step attribution (without the spans), its
  // replay, each step's critical path and its hardware-table row, as
  // analyze makes them; default for a summary without a rank.
  diagnose::RankDiagnosis rank_diagnosis;
  // The set size the parts were collected for (a detector falls back on it
  // where the trace records no world size); 0: not known when summarized.
  uint64_t ranks_in_set = 0;
};

}  // namespace stepscope::summary
