// The opening of the terminal report: where step time went (attribution), the
// primary bottleneck, and the findings with their remedies.
#pragma once

#include <string>

#include "diagnose/diagnose.h"

namespace stepscope::report {

struct DiagnosisTerminalOptions {
  size_t max_findings = 8;  // findings printed with their evidence and remedies
  // Past this many ranks, or where one column per rank would be wider than
  // the terminal, the attribution table summarises the ranks (min / median /
  // max) instead.
  size_t max_side_by_side = 8;
  size_t ranks = 1;  // ranks in the run: evidence names its rank only with several
  bool details = false;  // the checks not assessed, each with its reason (else one line naming them)
};

// One finding, numbered n, with its evidence and remedy ("\n  n. [category]
// title ..."); `ranks` in the run (examples name their rank only with several).
std::string finding_text(const diagnose::Finding& f, size_t n, size_t ranks);

// Every line within kTerminalWidth columns (terminal_text.h).
std::string render_diagnosis_terminal(const diagnose::Diagnosis& d, const DiagnosisTerminalOptions& options = {});

}  // namespace stepscope::report
