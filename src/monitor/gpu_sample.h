// One sampling pass over every GPU: the values NVML returned, in base units,
// and the calls that failed. A value NVML could not give stays empty.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepscope::monitor {

struct ProcessMemory {
  unsigned pid = 0;
  double used_bytes = 0;
};

struct GpuSample {
  int index = 0;
  std::string uuid, name;
  bool lost = false;  // NVML answered GPU_IS_LOST this pass
  std::optional<double> utilization_ratio;         // kernel-busy time fraction, 0..1
  std::optional<double> memory_copy_ratio;         // memory-controller busy fraction, 0..1
  std::optional<double> memory_used_bytes, memory_total_bytes;
  std::optional<double> power_watts;
  std::optional<double> energy_joules;             // since driver load (monotonic)
  std::optional<double> sm_clock_hertz, memory_clock_hertz;
  std::optional<double> temperature_celsius;
  std::optional<double> pcie_rx_bytes_per_second, pcie_tx_bytes_per_second;
  std::optional<double> nvlink_rx_bytes, nvlink_tx_bytes;  // cumulative, all links
  std::optional<double> ecc_corrected, ecc_uncorrected;    // volatile counts (monotonic)
  std::optional<uint64_t> throttle_reasons;                // NVML bit mask
  // GPM (Hopper and newer), fractions 0..1 over the last interval.
  std::optional<double> sm_active_ratio, sm_occupancy_ratio, tensor_active_ratio, dram_active_ratio;
  bool processes_known = false;
  std::vector<ProcessMemory> processes;
  std::vector<unsigned long long> xids;  // XID events seen since the previous pass
};

struct NvmlError {
  int gpu = -1;       // -1: not tied to one GPU
  std::string query;  // "memory_info", "power_usage", ...
  std::string error;  // "GPU_IS_LOST", "NOT_SUPPORTED", ...
};

struct Sample {
  std::vector<GpuSample> gpus;
  std::vector<NvmlError> errors;
  double duration_seconds = 0;
};

}  // namespace stepscope::monitor
