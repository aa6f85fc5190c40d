// The `--compat hta` parts of the JSON report: HTA 0.6.1's tables as HTA
// names them (top-level "hta"), and the per-rank fields that the compat mode
// takes from them instead of the exact analyses.
#pragma once

#include <nlohmann/json.hpp>

#include "analysis/hta_compat/hta_result.h"

namespace stepscope::report {

nlohmann::ordered_json hta_tables_json(const analysis::hta::HtaResult& hta);

// Replaces temporal_breakdown, comm_comp_overlap_pct, idle_breakdown,
// kernel_types and top_kernels of `rank_json` with HTA's rows for `rank`.
void apply_hta_to_rank(const analysis::hta::HtaResult& hta,
                       const std::vector<analysis::hta::HtaKernelTypeRow>& rank_kernel_types, int64_t rank,
                       nlohmann::ordered_json& rank_json);

}  // namespace stepscope::report
