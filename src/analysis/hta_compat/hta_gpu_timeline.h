// HTA's view of the GPU as a GpuTimeline, so stepscope's own analyses can run
// on what HTA sees (AnalysisOptions::timeline_builder): the activities left
// after HTA's µs rounding, drops and step filter, with HTA's launch link.
// The `--compat hta` numbers themselves come from run_hta_compat, not from this.
#pragma once

#include "analysis/analysis_options.h"
#include "analysis/gpu_timeline.h"
#include "trace/event_store.h"

namespace stepscope::analysis::hta {

// One activity per store row of kind kernel / memcpy / memset that HTA's
// frame keeps on a stream (a row the step filter repeats is listed once).
// Times are HTA's rounded µs in ns on the trace clock; a duration that
// rounding made negative is skipped and counted in dropped_negative (HTA
// keeps those). HTA also counts cuda_sync rows and annotations that carry a
// stream as kernels: they are not GPU work here. The launch is the frame row
// HTA links through index_correlation, when it is a host row.
GpuTimeline build_hta_gpu_timeline(const trace::EventStore& store, const AnalysisOptions& options);

}  // namespace stepscope::analysis::hta
