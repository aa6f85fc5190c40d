// HTA's communication/computation overlap for one rank (docs/hta_compat.md §6):
// the share of communication time during which computation also runs.
#pragma once

#include "analysis/hta_compat/hta_frame.h"
#include "analysis/hta_compat/hta_result.h"

namespace stepscope::analysis::hta {

// round(100 * |merged(COMMUNICATION) ∩ merged(COMPUTATION)| / Σ|merged(COMMUNICATION)|, 2);
// nullopt without communication (HTA's 0/0).
HtaOverlapRow hta_comm_comp_overlap(const HtaRankFrame& frame);

}  // namespace stepscope::analysis::hta
