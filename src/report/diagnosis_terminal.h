// The opening of the terminal report: where step time went (attribution), the
// primary bottleneck, and the findings with their remedies.
#pragma once

#include <string>

#include "diagnose/diagnose.h"

namespace stepscope::report {

std::string render_diagnosis_terminal(const diagnose::Diagnosis& d, size_t max_findings);

}  // namespace stepscope::report
