// Terminal tables for `--compat hta`: HTA 0.6.1's numbers, laid out like the
// exact report so a user can put the two side by side.
#pragma once

#include <string>

#include "analysis/hta_compat/hta_result.h"

namespace stepscope::report {

std::string render_hta_terminal(const analysis::hta::HtaResult& hta, size_t name_width);

}  // namespace stepscope::report
