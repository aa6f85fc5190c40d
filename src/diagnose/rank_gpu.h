// The GPU a rank ran on, as a row of the GPU table (model/gpu_table.h): the
// first of its trace's devices whose name the table knows.
#pragma once

#include "model/gpu_table.h"
#include "trace/event_store.h"

namespace stepscope::diagnose {

// nullptr when no device of the rank is in the table.
const model::GpuPeaks* rank_gpu_peaks(const trace::EventStore& store);

}  // namespace stepscope::diagnose
