#include "pipeline/salvage_check.h"

#include <fmt/core.h>

namespace stepscope::pipeline {

SalvageCheck check_salvaged_steps(const std::vector<analysis::RankAnalysis>& ranks) {
  SalvageCheck out;
  for (const analysis::RankAnalysis& r : ranks) {
    const analysis::StepsResult& s = r.steps;
    if (s.cut_section == "none") continue;
    // A trace without ProfilerStep annotations has no per-step figure to
    // protect: what was read is analysed as before (docs/architecture.md).
    if (s.cut_touches_steps && s.dropped_by_cut > 0) {
      if (out.error.empty()) {
        out.error_file = r.source_path;
        out.error = fmt::format(
            "{}: the file is cut {}: any step may have lost records, so all {} steps are dropped and nothing "
            "whole remains to analyse (docs/robustness.md, \"Salvaged steps\")",
            r.source_path,
            s.cut_section == "host" ? "before its device records (kernels, copies, runtime calls)"
                                    : "inside its device records, which Kineto writes buffer by buffer, not in time order",
            s.dropped_by_cut);
      }
      continue;
    }
    if (s.cut_section == "after_device")
      out.warnings.push_back(fmt::format("{}: the file is cut after its device records: 0 steps dropped, {} whole",
                                         r.source_path, s.steps.size()));
  }
  return out;
}

}  // namespace stepscope::pipeline
