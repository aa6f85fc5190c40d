// A stand-in for libnvidia-ml.so.1 that the monitor tests and the overhead
// benchmark load through --nvml-lib. It exports the NVML entry points the
// sampler resolves; what they answer comes from a control file named by
// STEPSCOPE_FAKE_NVML (re-read whenever it changes), so a test can add GPUs,
// set values, make a call fail (NOT_SUPPORTED, GPU_IS_LOST) or raise XIDs:
//
//   gpus 8                    # GPU count
//   memory_used 1000          # a key alone applies to every GPU ...
//   gpu.1.memory_used 2000    # ... gpu.N.key to GPU N only
//   gpu.2.error.power_usage 3 # that call returns NVML error 3 (NOT_SUPPORTED)
//   gpu.3.lost 1              # every call on GPU 3 returns 15 (GPU_IS_LOST)
//   gpu.0.xids 79 48          # XIDs that have happened; each is delivered once
//   gpu.0.process 4242 1e9    # a compute process (pid, bytes); repeatable
//
// Keys: name, uuid, util, mem_util, memory_total, memory_used, power_mw,
// energy_mj, sm_clock, mem_clock, temp, pcie_rx_kbps, pcie_tx_kbps,
// nvlink_rx_kib, nvlink_tx_kib, ecc_corrected, ecc_uncorrected, throttle,
// gpm, sm_active, sm_occupancy, tensor_active, dram_active.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "monitor/nvml_api.h"

using namespace stepscope::monitor::nvml;

namespace {

struct FakeGpu {
  int index = 0;
};
struct FakeSample {
  int gpu = -1;
};

std::mutex g_mu;
std::map<std::string, std::string> g_cfg;
std::map<std::string, std::vector<std::string>> g_multi;  // repeatable keys
struct timespec g_mtime {};
off_t g_size = -1;
FakeGpu g_gpus[64];
std::map<int, size_t> g_xids_delivered;

void reload_locked() {
  const char* path = std::getenv("STEPSCOPE_FAKE_NVML");
  if (!path) return;
  static std::string current;
  if (current != path) {  // a new control file starts from a clean state
    current = path;
    g_size = -1;
    g_xids_delivered.clear();
  }
  struct stat st {};
  if (stat(path, &st) != 0) return;
  if (st.st_size == g_size && st.st_mtim.tv_sec == g_mtime.tv_sec && st.st_mtim.tv_nsec == g_mtime.tv_nsec) return;
  g_size = st.st_size;
  g_mtime = st.st_mtim;
  g_cfg.clear();
  g_multi.clear();
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string key, rest;
    if (!(words >> key)) continue;
    std::getline(words, rest);
    size_t b = rest.find_first_not_of(' ');
    rest = b == std::string::npos ? "" : rest.substr(b);
    g_cfg[key] = rest;
    g_multi[key].push_back(rest);
  }
}

// The value of `key` for GPU `gpu` (gpu.N.key, else key), or `fallback`.
std::string value(int gpu, const std::string& key, const std::string& fallback) {
  auto it = g_cfg.find("gpu." + std::to_string(gpu) + "." + key);
  if (it != g_cfg.end()) return it->second;
  it = g_cfg.find(key);
  return it != g_cfg.end() ? it->second : fallback;
}
double number(int gpu, const std::string& key, double fallback) {
  std::string v = value(gpu, key, "");
  return v.empty() ? fallback : std::strtod(v.c_str(), nullptr);
}

int index_of(Device d) {
  for (int i = 0; i < 64; ++i)
    if (reinterpret_cast<Device>(&g_gpus[i]) == d) return i;
  return -1;
}

// The error a call on this GPU returns (0 = success).
Return failure(int gpu, const char* query) {
  if (gpu < 0) return 2;  // INVALID_ARGUMENT
  if (number(gpu, "lost", 0) != 0) return kErrorGpuIsLost;
  return static_cast<Return>(number(gpu, std::string("error.") + query, 0));
}

#define FAKE_BEGIN(query)                       \
  std::lock_guard lock(g_mu);                   \
  reload_locked();                              \
  int gpu = index_of(device);                   \
  if (Return r = failure(gpu, query); r != 0) return r

}  // namespace

extern "C" {

__attribute__((visibility("default"))) Return nvmlInit_v2() {
  std::lock_guard lock(g_mu);
  reload_locked();
  return number(-1, "init_error", 0) != 0 ? static_cast<Return>(number(-1, "init_error", 0)) : kSuccess;
}
__attribute__((visibility("default"))) Return nvmlShutdown() { return kSuccess; }
__attribute__((visibility("default"))) Return nvmlDeviceGetCount_v2(unsigned* count) {
  std::lock_guard lock(g_mu);
  reload_locked();
  *count = static_cast<unsigned>(number(-1, "gpus", 1));
  if (*count > 64) *count = 64;
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlDeviceGetHandleByIndex_v2(unsigned i, Device* device) {
  if (i >= 64) return 2;
  g_gpus[i].index = static_cast<int>(i);
  *device = reinterpret_cast<Device>(&g_gpus[i]);
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlDeviceGetName(Device device, char* buf, unsigned len) {
  FAKE_BEGIN("name");
  std::snprintf(buf, len, "%s", value(gpu, "name", "NVIDIA H200").c_str());
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlDeviceGetUUID(Device device, char* buf, unsigned len) {
  FAKE_BEGIN("uuid");
  std::snprintf(buf, len, "%s", value(gpu, "uuid", "GPU-fake-" + std::to_string(gpu)).c_str());
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlDeviceGetUtilizationRates(Device device, Utilization* u) {
  FAKE_BEGIN("utilization_rates");
  u->gpu = static_cast<unsigned>(number(gpu, "util", 0));
  u->memory = static_cast<unsigned>(number(gpu, "mem_util", 0));
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlDeviceGetMemoryInfo(Device device, Memory* m) {
  FAKE_BEGIN("memory_info");
  m->total = static_cast<unsigned long long>(number(gpu, "memory_total", 80e9));
  m->used = static_cast<unsigned long long>(number(gpu, "memory_used", 0));
  m->free = m->total - m->used;
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlDeviceGetPowerUsage(Device device, unsigned* mw) {
  FAKE_BEGIN("power_usage");
  *mw = static_cast<unsigned>(number(gpu, "power_mw", 0));
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlDeviceGetTotalEnergyConsumption(Device device, unsigned long long* mj) {
  FAKE_BEGIN("total_energy_consumption");
  *mj = static_cast<unsigned long long>(number(gpu, "energy_mj", 0));
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlDeviceGetClockInfo(Device device, unsigned type, unsigned* mhz) {
  FAKE_BEGIN(type == kClockSm ? "sm_clock" : "memory_clock");
  *mhz = static_cast<unsigned>(number(gpu, type == kClockSm ? "sm_clock" : "mem_clock", 0));
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlDeviceGetTemperature(Device device, unsigned, unsigned* c) {
  FAKE_BEGIN("temperature");
  *c = static_cast<unsigned>(number(gpu, "temp", 0));
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlDeviceGetPcieThroughput(Device device, unsigned counter, unsigned* kbps) {
  FAKE_BEGIN("pcie_throughput");
  *kbps = static_cast<unsigned>(number(gpu, counter == kPcieUtilRxBytes ? "pcie_rx_kbps" : "pcie_tx_kbps", 0));
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlDeviceGetFieldValues(Device device, int n, FieldValue* values) {
  FAKE_BEGIN("nvlink_throughput");
  for (int k = 0; k < n; ++k) {
    FieldValue& f = values[k];
    f.nvml_return = kSuccess;
    f.value_type = 4;  // unsigned long long
    if (f.field_id == kFieldNvlinkThroughputDataRx)
      f.value.ull = static_cast<unsigned long long>(number(gpu, "nvlink_rx_kib", 0));
    else if (f.field_id == kFieldNvlinkThroughputDataTx)
      f.value.ull = static_cast<unsigned long long>(number(gpu, "nvlink_tx_kib", 0));
    else
      f.nvml_return = kErrorNotSupported;
  }
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlDeviceGetTotalEccErrors(Device device, unsigned type, unsigned,
                                                                          unsigned long long* count) {
  FAKE_BEGIN("ecc_errors");
  *count = static_cast<unsigned long long>(number(gpu, type == kEccCorrected ? "ecc_corrected" : "ecc_uncorrected", 0));
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlDeviceGetCurrentClocksThrottleReasons(Device device,
                                                                                        unsigned long long* reasons) {
  FAKE_BEGIN("throttle_reasons");
  *reasons = std::strtoull(value(gpu, "throttle", "0").c_str(), nullptr, 0);
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlDeviceGetComputeRunningProcesses_v2(Device device, unsigned* count,
                                                                                      ProcessInfoV2* infos) {
  FAKE_BEGIN("compute_processes");
  std::vector<std::string> procs;
  if (auto it = g_multi.find("gpu." + std::to_string(gpu) + ".process"); it != g_multi.end()) procs = it->second;
  if (procs.size() > *count) {
    *count = static_cast<unsigned>(procs.size());
    return 7;  // INSUFFICIENT_SIZE
  }
  *count = static_cast<unsigned>(procs.size());
  for (size_t k = 0; k < procs.size(); ++k) {
    std::istringstream words(procs[k]);
    double pid = 0, bytes = 0;
    words >> pid >> bytes;
    infos[k] = {static_cast<unsigned>(pid), static_cast<unsigned long long>(bytes), 0xFFFFFFFFu, 0xFFFFFFFFu};
  }
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlEventSetCreate(EventSet* set) {
  *set = reinterpret_cast<EventSet>(&g_xids_delivered);
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlDeviceRegisterEvents(Device, unsigned long long, EventSet) {
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlEventSetWait_v2(EventSet, EventData* data, unsigned) {
  std::lock_guard lock(g_mu);
  reload_locked();
  for (int gpu = 0; gpu < 64; ++gpu) {
    auto it = g_cfg.find("gpu." + std::to_string(gpu) + ".xids");
    if (it == g_cfg.end()) continue;
    std::istringstream words(it->second);
    std::vector<unsigned long long> xids;
    for (unsigned long long x; words >> x;) xids.push_back(x);
    size_t& done = g_xids_delivered[gpu];
    if (done < xids.size()) {
      data->device = reinterpret_cast<Device>(&g_gpus[gpu]);
      data->event_type = kEventTypeXidCriticalError;
      data->event_data = xids[done++];
      return kSuccess;
    }
  }
  return kErrorTimeout;
}
__attribute__((visibility("default"))) Return nvmlEventSetFree(EventSet) { return kSuccess; }
__attribute__((visibility("default"))) Return nvmlGpmQueryDeviceSupport(Device device, GpmSupport* s) {
  FAKE_BEGIN("gpm_support");
  s->is_supported_device = number(gpu, "gpm", 0) != 0 ? 1 : 0;
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlGpmSampleAlloc(GpmSample* s) {
  *s = reinterpret_cast<GpmSample>(new FakeSample);
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlGpmSampleFree(GpmSample s) {
  delete reinterpret_cast<FakeSample*>(s);
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlGpmSampleGet(Device device, GpmSample s) {
  FAKE_BEGIN("gpm_sample_get");
  reinterpret_cast<FakeSample*>(s)->gpu = gpu;
  return kSuccess;
}
__attribute__((visibility("default"))) Return nvmlGpmMetricsGet(GpmMetricsGet* get) {
  std::lock_guard lock(g_mu);
  reload_locked();
  if (get->version != kGpmMetricsGetVersion) return 25;  // ARGUMENT_VERSION_MISMATCH
  int gpu = reinterpret_cast<FakeSample*>(get->sample2)->gpu;
  for (unsigned k = 0; k < get->num_metrics; ++k) {
    GpmMetric& m = get->metrics[k];
    const char* key = m.metric_id == kGpmSmUtil          ? "sm_active"
                      : m.metric_id == kGpmSmOccupancy   ? "sm_occupancy"
                      : m.metric_id == kGpmAnyTensorUtil ? "tensor_active"
                      : m.metric_id == kGpmDramBwUtil    ? "dram_active"
                                                         : nullptr;
    m.nvml_return = key ? kSuccess : kErrorNotSupported;
    if (key) m.value = number(gpu, key, 0);
  }
  return kSuccess;
}

}  // extern "C"
