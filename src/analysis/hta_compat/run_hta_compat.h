// `--compat hta`: HTA 0.6.1's numbers from EventStores (docs/hta_compat.md);
// `--compat hta-0.5.0`: those of the PyPI release.
// Builds HTA's frames once and runs every HTA analysis the conformance
// harness recorded, with HTA's default arguments (top kernels: 5 names,
// duration ratio 0.8; kernel_wait below 30 µs).
#pragma once

#include <vector>

#include "analysis/hta_compat/hta_result.h"
#include "trace/event_store.h"

namespace stepscope::analysis::hta {

// One HTA run over a set of rank traces (one store per trace file). The kernel
// type breakdown and the top-kernel table are over all ranks, as in HTA; the
// step filter and the time alignment see all ranks together.
HtaResult run_hta_compat(const std::vector<const trace::EventStore*>& stores,
                         HtaRelease release = HtaRelease::k0_6_1);

// HTA on a folder holding this trace alone.
HtaRankResult run_hta_compat(const trace::EventStore& store, HtaRelease release = HtaRelease::k0_6_1);

}  // namespace stepscope::analysis::hta
