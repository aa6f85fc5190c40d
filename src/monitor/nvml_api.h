// The part of NVML the monitor calls, declared here and resolved with dlsym
// at run time: stepscope builds and runs without the NVIDIA driver, and a test
// can point it at a fake library. Types and constants mirror the driver's ABI
// (values from NVIDIA's public NVML reference); only what the sampler needs.
#pragma once

#include <cstdint>
#include <string>

namespace stepscope::monitor::nvml {

using Return = int;  // nvmlReturn_t
constexpr Return kSuccess = 0;
constexpr Return kErrorNotSupported = 3;
constexpr Return kErrorNoPermission = 4;
constexpr Return kErrorNotFound = 6;
constexpr Return kErrorTimeout = 10;
constexpr Return kErrorFunctionNotFound = 13;
constexpr Return kErrorGpuIsLost = 15;
constexpr Return kErrorUnknown = 999;

struct DeviceSt;
using Device = DeviceSt*;  // nvmlDevice_t
struct EventSetSt;
using EventSet = EventSetSt*;  // nvmlEventSet_t
struct GpmSampleSt;
using GpmSample = GpmSampleSt*;  // nvmlGpmSample_t

struct Memory {  // nvmlMemory_t (v1)
  unsigned long long total, free, used;
};
struct Utilization {  // nvmlUtilization_t, percent
  unsigned int gpu, memory;
};
struct ProcessInfoV2 {  // nvmlProcessInfo_v2_t
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id, compute_instance_id;
};
struct EventData {  // nvmlEventData_t; the two trailing ids exist in newer drivers only
  Device device;
  unsigned long long event_type;
  unsigned long long event_data;  // the XID for kEventTypeXidCriticalError
  unsigned int gpu_instance_id, compute_instance_id;
};
union Value {  // nvmlValue_t
  double d;
  unsigned int ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
};
struct FieldValue {  // nvmlFieldValue_t
  unsigned int field_id;
  unsigned int scope_id;
  long long timestamp;
  long long latency_usec;
  int value_type;
  Return nvml_return;
  Value value;
};
struct GpmSupport {  // nvmlGpmSupport_t
  unsigned int version;
  unsigned int is_supported_device;
};
struct GpmMetric {  // nvmlGpmMetric_t
  unsigned int metric_id;
  Return nvml_return;
  double value;
  const char* short_name;
  const char* long_name;
  const char* unit;
};
constexpr int kGpmMetricMax = 98;  // array length the caller provides; NVML reads numMetrics entries
struct GpmMetricsGet {             // nvmlGpmMetricsGet_t
  unsigned int version;
  unsigned int num_metrics;
  GpmSample sample1, sample2;
  GpmMetric metrics[kGpmMetricMax];
};

constexpr unsigned kClockSm = 1, kClockMem = 2;                   // nvmlClockType_t
constexpr unsigned kTemperatureGpu = 0;                           // nvmlTemperatureSensors_t
constexpr unsigned kPcieUtilTxBytes = 0, kPcieUtilRxBytes = 1;    // nvmlPcieUtilCounter_t (KB/s)
constexpr unsigned kEccCorrected = 0, kEccUncorrected = 1;        // nvmlMemoryErrorType_t
constexpr unsigned kVolatileEcc = 0;                              // nvmlEccCounterType_t
constexpr unsigned long long kEventTypeXidCriticalError = 0x8ULL;
constexpr unsigned kFieldNvlinkThroughputDataTx = 138;  // KiB, cumulative
constexpr unsigned kFieldNvlinkThroughputDataRx = 139;
constexpr unsigned kScopeAllLinks = 0xFFFFFFFFu;  // scopeId: summed over every link
constexpr unsigned kGpmMetricsGetVersion = 1, kGpmSupportVersion = 1;
constexpr unsigned kGpmSmUtil = 2, kGpmSmOccupancy = 3, kGpmAnyTensorUtil = 5, kGpmDramBwUtil = 10;

// nvmlDeviceGetCurrentClocksThrottleReasons bits.
constexpr unsigned long long kThrottleGpuIdle = 0x1, kThrottleAppClocks = 0x2, kThrottleSwPowerCap = 0x4,
                             kThrottleHwSlowdown = 0x8, kThrottleSyncBoost = 0x10, kThrottleSwThermal = 0x20,
                             kThrottleHwThermal = 0x40, kThrottleHwPowerBrake = 0x80;

// "GPU_IS_LOST", "NOT_SUPPORTED", ...: the label value a failed call gets.
std::string error_name(Return r);

// Function table filled by dlsym; optional entries stay null when the
// library lacks them (older drivers have no GPM or no _v2 events).
struct Api {
  Return (*init)() = nullptr;
  Return (*shutdown)() = nullptr;
  Return (*device_get_count)(unsigned*) = nullptr;
  Return (*device_get_handle_by_index)(unsigned, Device*) = nullptr;
  Return (*device_get_name)(Device, char*, unsigned) = nullptr;
  Return (*device_get_uuid)(Device, char*, unsigned) = nullptr;
  Return (*device_get_utilization_rates)(Device, Utilization*) = nullptr;
  Return (*device_get_memory_info)(Device, Memory*) = nullptr;
  Return (*device_get_power_usage)(Device, unsigned*) = nullptr;                       // mW
  Return (*device_get_total_energy_consumption)(Device, unsigned long long*) = nullptr;  // mJ
  Return (*device_get_clock_info)(Device, unsigned, unsigned*) = nullptr;              // MHz
  Return (*device_get_temperature)(Device, unsigned, unsigned*) = nullptr;             // °C
  Return (*device_get_pcie_throughput)(Device, unsigned, unsigned*) = nullptr;         // KB/s
  Return (*device_get_field_values)(Device, int, FieldValue*) = nullptr;
  Return (*device_get_total_ecc_errors)(Device, unsigned, unsigned, unsigned long long*) = nullptr;
  Return (*device_get_current_clocks_throttle_reasons)(Device, unsigned long long*) = nullptr;
  Return (*device_get_compute_running_processes)(Device, unsigned*, ProcessInfoV2*) = nullptr;
  Return (*event_set_create)(EventSet*) = nullptr;
  Return (*device_register_events)(Device, unsigned long long, EventSet) = nullptr;
  Return (*event_set_wait)(EventSet, EventData*, unsigned) = nullptr;
  Return (*event_set_free)(EventSet) = nullptr;
  Return (*gpm_query_device_support)(Device, GpmSupport*) = nullptr;
  Return (*gpm_sample_alloc)(GpmSample*) = nullptr;
  Return (*gpm_sample_free)(GpmSample) = nullptr;
  Return (*gpm_sample_get)(Device, GpmSample) = nullptr;
  Return (*gpm_metrics_get)(GpmMetricsGet*) = nullptr;
};

// An opened NVML library. open() fails (with a reason) when the file cannot
// be loaded or lacks a required entry point; optional ones may be missing.
class Library {
 public:
  Library() = default;
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  ~Library();
  bool open(const std::string& path, std::string& error);
  const Api& api() const { return api_; }

 private:
  void* handle_ = nullptr;
  Api api_;
};

}  // namespace stepscope::monitor::nvml
