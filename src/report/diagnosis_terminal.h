// The opening of the terminal report: where step time went (attribution), the
// primary bottleneck, and the findings with their remedies.
#pragma once

#include <string>

#include "diagnose/diagnose.h"

namespace stepscope::report {

// Past `max_side_by_side` ranks the attribution table summarises the ranks
// (min / median / max) instead of one column per rank.
std::string render_diagnosis_terminal(const diagnose::Diagnosis& d, size_t max_findings, size_t max_side_by_side);

}  // namespace stepscope::report
