// What truncation (--salvage) left of each rank's steps.
#pragma once

#include <string>
#include <vector>

#include "analysis/rank_analysis.h"

namespace stepscope::pipeline {

// A warning per cut file (where the cut came, how many steps were dropped and
// why), and an error naming the first file whose steps the cut may all have
// touched: nothing whole remains to analyse per step. Both empty for whole files.
struct SalvageCheck {
  std::vector<std::string> warnings;
  std::string error;
  std::string error_file;  // the file the error names
};
SalvageCheck check_salvaged_steps(const std::vector<analysis::RankAnalysis>& ranks);

}  // namespace stepscope::pipeline
