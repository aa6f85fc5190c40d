// The human-readable report of `stepscope diff`: step time, attribution
// buckets, findings and kernels before -> after, as aligned tables with units
// (the same TextTable as `stepscope analyze`).
#pragma once

#include <optional>

#include "diff/regression_gate.h"

#include <string>
#include <vector>

#include "diff/run_diff.h"

namespace stepscope::report {

// Everything `stepscope diff` hands to the renderers.
struct DiffReport {
  std::vector<std::string> before_inputs;  // as given on the command line
  std::vector<std::string> after_inputs;
  std::vector<std::string> warnings;       // from loading either side, prefixed "before:" / "after:"
  diff::DiffOptions options;               // the thresholds the result was made with
  diff::DiffResult result;
  // --fail-if: the conditions as written and the verdict (absent without conditions).
  std::vector<std::string> gate_conditions;
  std::optional<diff::GateVerdict> gate;
};

struct DiffTerminalOptions {
  size_t name_width = 60;   // kernel names are cut to this many characters
  size_t title_width = 90;  // finding titles are cut to this many characters
};

std::string render_diff_terminal(const DiffReport& report, const DiffTerminalOptions& options = {});

}  // namespace stepscope::report
