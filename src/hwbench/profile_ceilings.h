// Turns a hardware profile into the peak table row the diagnosis compares
// achieved rates with: measured ceilings replace datasheet peaks where the
// bench measured them, the datasheet row fills the rest.
#pragma once

#include <optional>
#include <string>

#include "model/gpu_table.h"
#include "model/hardware_profile.h"

namespace stepscope::hwbench {

using model::HardwareProfile;

// Datasheet row of the profile's device (or its "gpu" when the device name is
// empty), with: each matmul rate = the maximum achievable TFLOP/s of its dtype
// (fp32_tflops from the fp32 sweep: the SIMT path), hbm_gbps = HBM copy,
// link_gbps = 2 × the best all-reduce bus bandwidth (the table holds both
// directions) when at least 2 GPUs took part, memory_gb = the device's memory.
// The row's model and source views point into `profile` and static text: keep
// `profile` alive while the row is used. nullopt with `error` when the
// profile measured none of these.
std::optional<model::GpuPeaks> measured_peaks(const HardwareProfile& profile, std::string& error);

}  // namespace stepscope::hwbench
