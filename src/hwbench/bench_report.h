// The terminal report of a hardware profile: tables with units in their
// headers, the golden comparison's verdicts and what was not measured. It
// renders; it computes nothing beyond the verdicts it asks for.
#pragma once

#include <string>

#include "model/hardware_profile.h"

namespace stepscope::hwbench {

using model::HardwareProfile;

std::string render_bench_report(const HardwareProfile& profile);

}  // namespace stepscope::hwbench
