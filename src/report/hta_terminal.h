// Terminal tables for `--compat hta`: HTA 0.6.1's numbers, laid out like the
// exact report so a user can put the two side by side.
#pragma once

#include <string>

#include "analysis/hta_compat/hta_result.h"

namespace stepscope::report {

// Past `max_rank_rows` ranks, the per-rank tables keep the ranks with the
// largest idle share (the JSON report has every rank).
std::string render_hta_terminal(const analysis::hta::HtaResult& hta, size_t name_width, size_t max_rank_rows);

}  // namespace stepscope::report
