// What every GPU benchmark of one run shares: the device, its stream, the L2
// flusher and how thorough to be.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "hwbench/gpu/device_timer.h"
#include "model/hardware_profile.h"

namespace stepscope::hwbench::gpu {

using model::DeviceInfo;
using model::BandwidthResult;

struct BenchContext {
  DeviceInfo device;
  cudaStream_t stream = nullptr;
  L2Flusher* flusher = nullptr;
  bool quick = false;
  std::vector<std::string>* notes = nullptr;  // where a benchmark says what it skipped
  void note(std::string text) const {
    if (notes) notes->push_back(std::move(text));
  }
};

// One result line on stderr while the run goes (the report comes at the end).
void progress(const std::string& line);

// A bandwidth measurement (bytes moved in `seconds`) with its progress line:
// "<section> <name> <GB/s> (<MiB> per <unit>, <ms>)".
BandwidthResult bandwidth_result(const char* section, const char* name, double bytes, double seconds,
                                 const char* unit);

}  // namespace stepscope::hwbench::gpu
