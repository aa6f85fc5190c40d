#include "pipeline/cross_rank.h"

#include <fmt/core.h>

#include "pipeline/salvage_check.h"

namespace stepscope::pipeline {

namespace {

// Ranks that declare different world sizes come from different jobs (or a
// job resized between windows): their collectives cannot be matched call
// for call. Said once, naming the first rank of each size.
void warn_on_world_sizes(const std::vector<analysis::RankAnalysis>& ranks, std::vector<std::string>& warnings) {
  const analysis::RankAnalysis* first = nullptr;
  for (const analysis::RankAnalysis& r : ranks) {
    if (!r.origin.world_size) continue;
    if (!first) {
      first = &r;
      continue;
    }
    if (*r.origin.world_size != *first->origin.world_size) {
      warnings.push_back(fmt::format(
          "{} says world size {} but {} says {}: ranks of different jobs in one set? Collectives are matched by order "
          "and may pair calls of different jobs",
          first->source_path, *first->origin.world_size, r.source_path, *r.origin.world_size));
      return;
    }
  }
}

}  // namespace

CrossRankResult finish_cross_rank(report::AnalyzeReport& report, std::vector<std::string> set_warnings,
                                  const analysis::AnalysisOptions& options) {
  CrossRankResult out;
  SalvageCheck salvage = check_salvaged_steps(report.ranks);
  if (!salvage.error.empty()) {
    out.error = std::move(salvage.error);
    out.error_file = std::move(salvage.error_file);
    return out;
  }
  for (auto& w : salvage.warnings) set_warnings.push_back(std::move(w));
  warn_on_world_sizes(report.ranks, set_warnings);
  if (report.ranks.size() >= 2) {
    std::vector<const analysis::RankAnalysis*> ptrs;
    for (const auto& r : report.ranks) ptrs.push_back(&r);
    report.multi = analysis::analyze_ranks(ptrs, options);
    for (const auto& w : report.multi.warnings) set_warnings.push_back(w);
  }
  report.warnings = std::move(set_warnings);
  return out;
}

}  // namespace stepscope::pipeline
