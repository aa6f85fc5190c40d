// Runs the selected benchmarks on the GPU and returns the hardware profile.
// Throws BenchError (cuda_check.h) with a one-line reason: no GPU, a bad
// device index, a failed call or a wrong result.
#pragma once

#include "hwbench/bench_options.h"
#include "model/hardware_profile.h"

namespace stepscope::hwbench::gpu {

using model::HardwareProfile;

HardwareProfile run_bench(const BenchOptions& options);

}  // namespace stepscope::hwbench::gpu
