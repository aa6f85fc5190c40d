#include "monitor/nvml_api.h"

#include <dlfcn.h>
#include <fmt/core.h>

namespace stepscope::monitor::nvml {

std::string error_name(Return r) {
  switch (r) {
    case 0: return "SUCCESS";
    case 1: return "UNINITIALIZED";
    case 2: return "INVALID_ARGUMENT";
    case 3: return "NOT_SUPPORTED";
    case 4: return "NO_PERMISSION";
    case 6: return "NOT_FOUND";
    case 7: return "INSUFFICIENT_SIZE";
    case 8: return "INSUFFICIENT_POWER";
    case 9: return "DRIVER_NOT_LOADED";
    case 10: return "TIMEOUT";
    case 11: return "IRQ_ISSUE";
    case 12: return "LIBRARY_NOT_FOUND";
    case 13: return "FUNCTION_NOT_FOUND";
    case 14: return "CORRUPTED_INFOROM";
    case 15: return "GPU_IS_LOST";
    case 16: return "RESET_REQUIRED";
    case 17: return "OPERATING_SYSTEM";
    case 18: return "LIB_RM_VERSION_MISMATCH";
    case 19: return "IN_USE";
    case 20: return "MEMORY";
    case 21: return "NO_DATA";
    case 999: return "UNKNOWN";
    default: return fmt::format("CODE_{}", r);
  }
}

namespace {
template <typename Fn>
void resolve(void* handle, const char* name, Fn& slot) {
  slot = reinterpret_cast<Fn>(dlsym(handle, name));
}
}  // namespace

Library::~Library() {
  if (handle_) {
    if (api_.shutdown) api_.shutdown();
    dlclose(handle_);
  }
}

bool Library::open(const std::string& path, std::string& error) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* why = dlerror();
    error = fmt::format("{}: cannot load NVML ({})", path, why ? why : "unknown reason");
    return false;
  }
  resolve(handle_, "nvmlInit_v2", api_.init);
  resolve(handle_, "nvmlShutdown", api_.shutdown);
  resolve(handle_, "nvmlDeviceGetCount_v2", api_.device_get_count);
  resolve(handle_, "nvmlDeviceGetHandleByIndex_v2", api_.device_get_handle_by_index);
  resolve(handle_, "nvmlDeviceGetName", api_.device_get_name);
  resolve(handle_, "nvmlDeviceGetUUID", api_.device_get_uuid);
  resolve(handle_, "nvmlDeviceGetUtilizationRates", api_.device_get_utilization_rates);
  resolve(handle_, "nvmlDeviceGetMemoryInfo", api_.device_get_memory_info);
  resolve(handle_, "nvmlDeviceGetPowerUsage", api_.device_get_power_usage);
  resolve(handle_, "nvmlDeviceGetTotalEnergyConsumption", api_.device_get_total_energy_consumption);
  resolve(handle_, "nvmlDeviceGetClockInfo", api_.device_get_clock_info);
  resolve(handle_, "nvmlDeviceGetTemperature", api_.device_get_temperature);
  resolve(handle_, "nvmlDeviceGetPcieThroughput", api_.device_get_pcie_throughput);
  resolve(handle_, "nvmlDeviceGetFieldValues", api_.device_get_field_values);
  resolve(handle_, "nvmlDeviceGetTotalEccErrors", api_.device_get_total_ecc_errors);
  resolve(handle_, "nvmlDeviceGetCurrentClocksThrottleReasons", api_.device_get_current_clocks_throttle_reasons);
  resolve(handle_, "nvmlDeviceGetComputeRunningProcesses_v2", api_.device_get_compute_running_processes);
  resolve(handle_, "nvmlEventSetCreate", api_.event_set_create);
  resolve(handle_, "nvmlDeviceRegisterEvents", api_.device_register_events);
  resolve(handle_, "nvmlEventSetWait_v2", api_.event_set_wait);
  resolve(handle_, "nvmlEventSetFree", api_.event_set_free);
  resolve(handle_, "nvmlGpmQueryDeviceSupport", api_.gpm_query_device_support);
  resolve(handle_, "nvmlGpmSampleAlloc", api_.gpm_sample_alloc);
  resolve(handle_, "nvmlGpmSampleFree", api_.gpm_sample_free);
  resolve(handle_, "nvmlGpmSampleGet", api_.gpm_sample_get);
  resolve(handle_, "nvmlGpmMetricsGet", api_.gpm_metrics_get);
  const char* missing = !api_.init                         ? "nvmlInit_v2"
                        : !api_.shutdown                   ? "nvmlShutdown"
                        : !api_.device_get_count           ? "nvmlDeviceGetCount_v2"
                        : !api_.device_get_handle_by_index ? "nvmlDeviceGetHandleByIndex_v2"
                                                           : nullptr;
  if (missing) {
    error = fmt::format("{}: not an NVML library (no {})", path, missing);
    api_.shutdown = nullptr;
    return false;
  }
  Return r = api_.init();
  if (r != kSuccess) {
    error = fmt::format("{}: nvmlInit failed ({})", path, error_name(r));
    api_.shutdown = nullptr;
    return false;
  }
  return true;
}

}  // namespace stepscope::monitor::nvml
