// The replay graph of a rank (whatif/step_graph.h) from what the diagnosis
// already has: the GPU timeline, the steps and the host index, whose name
// rules say which calls block and which spans are DataLoader waits.
#pragma once

#include "analysis/gpu_timeline.h"
#include "analysis/steps.h"
#include "diagnose/host_index.h"
#include "trace/event_store.h"
#include "whatif/step_graph.h"

namespace stepscope::diagnose {

whatif::StepGraph build_replay_graph(const trace::EventStore& store, const analysis::GpuTimeline& timeline,
                                     const analysis::StepsResult& steps, const HostIndex& host);

}  // namespace stepscope::diagnose
