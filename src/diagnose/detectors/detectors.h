// One factory per detector; each lives in its own file in this folder and is
// registered, in run order, in detector_registry.cpp.
#pragma once

#include "diagnose/detector.h"

namespace stepscope::diagnose {

Detector data_pipeline_detector();         // detectors/data_pipeline.cpp
Detector host_sync_detector();             // detectors/host_sync.cpp
Detector memory_allocator_detector();      // detectors/memory_allocator.cpp
Detector memory_capacity_detector();       // detectors/memory_capacity.cpp
Detector compute_efficiency_detector();    // detectors/compute_efficiency.cpp
Detector communication_detector();         // detectors/communication.cpp
Detector load_imbalance_detector();        // detectors/load_imbalance.cpp
Detector unfused_optimizer_detector();     // detectors/unfused_optimizer.cpp
Detector recomputed_constants_detector();  // detectors/recomputed_constants.cpp
Detector fusion_opportunity_detector();    // detectors/fusion_opportunity.cpp
Detector host_overhead_detector();         // detectors/host_overhead.cpp (runs last)

}  // namespace stepscope::diagnose
