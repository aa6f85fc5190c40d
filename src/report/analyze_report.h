// Everything `stepscope analyze` hands to the renderers: the inputs, the
// import summary of each rank and the analysis results. Renderers format this
// and compute nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <optional>

#include "analysis/hta_compat/hta_result.h"
#include "analysis/multi_rank.h"
#include "analysis/rank_analysis.h"
#include "diagnose/diagnose.h"
#include "trace/event_store.h"

namespace stepscope::report {

inline constexpr int kJsonSchemaVersion = 2;
inline constexpr const char* kToolVersion = "0.1.0";

struct AnalyzeReport {
  std::string mode = "exact";                 // "exact" or the --compat value ("hta", "hta-0.6.1", "hta-0.5.0")
  std::vector<std::string> inputs;            // as given on the command line
  std::vector<std::string> notes;             // skipped files etc.
  std::vector<std::string> warnings;          // salvaged / dropped data
  uint64_t uncompressed_bytes = 0;            // JSON text read, B
  uint64_t file_bytes = 0;                    // bytes on disk, B
  size_t summaries = 0;                       // stepscope merge: the summary files read (0: the traces were read)
  double read_seconds = 0;                    // wall time to read all ranks (or their summaries), s
  double analysis_seconds = 0;                // wall time of the analyses, s
  std::vector<const trace::EventStore*> stores;  // one per rank, rank order
  std::vector<analysis::RankAnalysis> ranks;     // same order as stores
  analysis::MultiRankAnalysis multi;             // cross-rank results (meaningful with >= 2 ranks)
  std::optional<diagnose::Diagnosis> diagnosis;  // absent only when diagnosis was not run
  // --compat hta: HTA 0.6.1's tables over all ranks, and per rank the kernel
  // type table of that rank alone (HTA pools it over ranks).
  std::optional<analysis::hta::HtaResult> hta;
  std::vector<std::vector<analysis::hta::HtaKernelTypeRow>> hta_rank_kernel_types;
};

}  // namespace stepscope::report
