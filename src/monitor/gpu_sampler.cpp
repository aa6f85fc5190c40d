#include "monitor/gpu_sampler.h"

#include <fmt/core.h>

#include <chrono>
#include <cstring>

namespace stepscope::monitor {

using namespace nvml;

namespace {
double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
// GPM metrics are rates between two samples: closer ones say little (the
// first pass runs right after start-up), so they wait for the next pass.
constexpr double kMinGpmSpanSeconds = 0.1;
}  // namespace

GpuSampler::GpuSampler(const std::string& library_path, Logger log) : log_(std::move(log)) {
  if (!lib_.open(library_path, error_)) return;
  const Api& api = lib_.api();
  unsigned count = 0;
  if (Return r = api.device_get_count(&count); r != kSuccess) {
    error_ = fmt::format("{}: nvmlDeviceGetCount failed ({})", library_path, error_name(r));
    return;
  }
  if (api.event_set_create && api.event_set_create(&events_) != kSuccess) events_ = nullptr;
  for (unsigned i = 0; i < count; ++i) {
    DeviceState d;
    if (Return r = api.device_get_handle_by_index(i, &d.handle); r != kSuccess) {
      // Kept with a null handle: every pass then reports the GPU as lost.
      if (log_) log_(fmt::format("GPU {}: nvmlDeviceGetHandleByIndex failed ({})", i, error_name(r)));
      d.handle = nullptr;
    } else {
      char buf[96] = {};
      if (api.device_get_uuid && api.device_get_uuid(d.handle, buf, sizeof buf) == kSuccess) d.uuid = buf;
      std::memset(buf, 0, sizeof buf);
      if (api.device_get_name && api.device_get_name(d.handle, buf, sizeof buf) == kSuccess) d.name = buf;
      if (events_ && api.device_register_events)
        api.device_register_events(d.handle, kEventTypeXidCriticalError, events_);
      GpmSupport support{kGpmSupportVersion, 0};
      if (api.gpm_query_device_support && api.gpm_sample_alloc && api.gpm_sample_get && api.gpm_metrics_get &&
          api.gpm_query_device_support(d.handle, &support) == kSuccess && support.is_supported_device) {
        d.gpm = api.gpm_sample_alloc(&d.previous) == kSuccess &&
                api.gpm_sample_get(d.handle, d.previous) == kSuccess;
        d.previous_time = steady_seconds();
      }
    }
    if (d.uuid.empty()) d.uuid = fmt::format("unknown-{}", i);
    devices_.push_back(std::move(d));
  }
  ok_ = true;
}

GpuSampler::~GpuSampler() {
  const Api& api = lib_.api();
  for (auto& d : devices_)
    if (d.previous && api.gpm_sample_free) api.gpm_sample_free(d.previous);
  if (events_ && api.event_set_free) api.event_set_free(events_);
}

// True when `r` is success. A failure is recorded (and logged the first time
// this GPU, call and error meet); GPU_IS_LOST marks the GPU lost for the pass.
bool GpuSampler::check(int gpu, const char* query, Return r, Sample& out, GpuSample* g) {
  if (r == kSuccess) return true;
  std::string name = error_name(r);
  out.errors.push_back({gpu, query, name});
  if (g && r == kErrorGpuIsLost) g->lost = true;
  if (r == kErrorNotSupported && gpu >= 0) devices_[gpu].unsupported.insert(query);
  if (logged_.emplace(gpu, query, name).second && log_)
    log_(fmt::format("GPU {}: NVML {} failed: {}{}", gpu, query, name,
                     r == kErrorNotSupported ? " (not asked again)" : ""));
  return false;
}

void GpuSampler::sample_gpm(int i, DeviceState& d, GpuSample& g, Sample& out) {
  const Api& api = lib_.api();
  if (steady_seconds() - d.previous_time < kMinGpmSpanSeconds) return;
  GpmSample current = nullptr;
  if (!check(i, "gpm_sample_alloc", api.gpm_sample_alloc(&current), out, &g)) return;
  if (!check(i, "gpm_sample_get", api.gpm_sample_get(d.handle, current), out, &g)) {
    api.gpm_sample_free(current);
    return;
  }
  auto get = std::make_unique<GpmMetricsGet>();
  std::memset(get.get(), 0, sizeof(GpmMetricsGet));
  get->version = kGpmMetricsGetVersion;
  get->num_metrics = 4;
  get->sample1 = d.previous;
  get->sample2 = current;
  const unsigned ids[4] = {kGpmSmUtil, kGpmSmOccupancy, kGpmAnyTensorUtil, kGpmDramBwUtil};
  for (int k = 0; k < 4; ++k) get->metrics[k].metric_id = ids[k];
  if (check(i, "gpm_metrics_get", api.gpm_metrics_get(get.get()), out, &g)) {
    std::optional<double>* slots[4] = {&g.sm_active_ratio, &g.sm_occupancy_ratio, &g.tensor_active_ratio,
                                       &g.dram_active_ratio};
    for (int k = 0; k < 4; ++k)
      if (get->metrics[k].nvml_return == kSuccess) *slots[k] = get->metrics[k].value / 100.0;
  }
  api.gpm_sample_free(d.previous);
  d.previous = current;
  d.previous_time = steady_seconds();
}

void GpuSampler::drain_xid_events(Sample& out) {
  const Api& api = lib_.api();
  if (!events_ || !api.event_set_wait) return;
  // Bounded: a flood of events cannot hold the sampling pass.
  for (int n = 0; n < 1024; ++n) {
    EventData e{};
    Return r = api.event_set_wait(events_, &e, 0);
    if (r == kErrorTimeout) return;
    if (!check(-1, "event_set_wait", r, out, nullptr)) return;
    if (!(e.event_type & kEventTypeXidCriticalError)) continue;
    for (size_t i = 0; i < devices_.size(); ++i)
      if (devices_[i].handle == e.device) {
        out.gpus[i].xids.push_back(e.event_data);
        if (log_) log_(fmt::format("GPU {}: XID {} reported", i, e.event_data));
      }
  }
}

Sample GpuSampler::sample() {
  auto start = std::chrono::steady_clock::now();
  Sample out;
  if (!ok_) return out;
  const Api& api = lib_.api();
  out.gpus.resize(devices_.size());
  for (size_t n = 0; n < devices_.size(); ++n) {
    const int i = static_cast<int>(n);
    DeviceState& d = devices_[n];
    GpuSample& g = out.gpus[n];
    g.index = i;
    g.uuid = d.uuid;
    g.name = d.name;
    if (!d.handle) {
      check(i, "device_handle", kErrorGpuIsLost, out, &g);
      continue;
    }
    // Each query: skipped when the library lacks it or the GPU said NOT_SUPPORTED.
    auto want = [&](const char* query, const void* fn) { return fn && !d.unsupported.count(query); };
    if (want("utilization_rates", reinterpret_cast<const void*>(api.device_get_utilization_rates))) {
      Utilization u{};
      if (check(i, "utilization_rates", api.device_get_utilization_rates(d.handle, &u), out, &g)) {
        g.utilization_ratio = u.gpu / 100.0;
        g.memory_copy_ratio = u.memory / 100.0;
      }
    }
    if (g.lost) continue;  // every other call would fail the same way
    if (want("memory_info", reinterpret_cast<const void*>(api.device_get_memory_info))) {
      Memory m{};
      if (check(i, "memory_info", api.device_get_memory_info(d.handle, &m), out, &g)) {
        g.memory_used_bytes = static_cast<double>(m.used);
        g.memory_total_bytes = static_cast<double>(m.total);
      }
    }
    unsigned v = 0;
    unsigned long long ull = 0;
    if (want("power_usage", reinterpret_cast<const void*>(api.device_get_power_usage)) &&
        check(i, "power_usage", api.device_get_power_usage(d.handle, &v), out, &g))
      g.power_watts = v / 1000.0;
    if (want("total_energy_consumption", reinterpret_cast<const void*>(api.device_get_total_energy_consumption)) &&
        check(i, "total_energy_consumption", api.device_get_total_energy_consumption(d.handle, &ull), out, &g))
      g.energy_joules = ull / 1000.0;
    if (want("sm_clock", reinterpret_cast<const void*>(api.device_get_clock_info)) &&
        check(i, "sm_clock", api.device_get_clock_info(d.handle, kClockSm, &v), out, &g))
      g.sm_clock_hertz = v * 1e6;
    if (want("memory_clock", reinterpret_cast<const void*>(api.device_get_clock_info)) &&
        check(i, "memory_clock", api.device_get_clock_info(d.handle, kClockMem, &v), out, &g))
      g.memory_clock_hertz = v * 1e6;
    if (want("temperature", reinterpret_cast<const void*>(api.device_get_temperature)) &&
        check(i, "temperature", api.device_get_temperature(d.handle, kTemperatureGpu, &v), out, &g))
      g.temperature_celsius = v;
    if (want("pcie_throughput", reinterpret_cast<const void*>(api.device_get_pcie_throughput))) {
      if (check(i, "pcie_throughput", api.device_get_pcie_throughput(d.handle, kPcieUtilRxBytes, &v), out, &g))
        g.pcie_rx_bytes_per_second = v * 1e3;
      if (!d.unsupported.count("pcie_throughput") &&
          check(i, "pcie_throughput", api.device_get_pcie_throughput(d.handle, kPcieUtilTxBytes, &v), out, &g))
        g.pcie_tx_bytes_per_second = v * 1e3;
    }
    if (want("nvlink_throughput", reinterpret_cast<const void*>(api.device_get_field_values))) {
      FieldValue f[2] = {};
      f[0].field_id = kFieldNvlinkThroughputDataRx;
      f[1].field_id = kFieldNvlinkThroughputDataTx;
      f[0].scope_id = f[1].scope_id = kScopeAllLinks;
      if (check(i, "nvlink_throughput", api.device_get_field_values(d.handle, 2, f), out, &g)) {
        if (check(i, "nvlink_throughput", f[0].nvml_return, out, &g)) g.nvlink_rx_bytes = f[0].value.ull * 1024.0;
        if (check(i, "nvlink_throughput", f[1].nvml_return, out, &g)) g.nvlink_tx_bytes = f[1].value.ull * 1024.0;
      }
    }
    if (want("ecc_errors", reinterpret_cast<const void*>(api.device_get_total_ecc_errors))) {
      if (check(i, "ecc_errors", api.device_get_total_ecc_errors(d.handle, kEccCorrected, kVolatileEcc, &ull), out, &g))
        g.ecc_corrected = static_cast<double>(ull);
      if (!d.unsupported.count("ecc_errors") &&
          check(i, "ecc_errors", api.device_get_total_ecc_errors(d.handle, kEccUncorrected, kVolatileEcc, &ull), out, &g))
        g.ecc_uncorrected = static_cast<double>(ull);
    }
    if (want("throttle_reasons", reinterpret_cast<const void*>(api.device_get_current_clocks_throttle_reasons)) &&
        check(i, "throttle_reasons", api.device_get_current_clocks_throttle_reasons(d.handle, &ull), out, &g))
      g.throttle_reasons = ull;
    if (want("compute_processes", reinterpret_cast<const void*>(api.device_get_compute_running_processes))) {
      ProcessInfoV2 infos[64];
      unsigned n_infos = 64;
      if (check(i, "compute_processes", api.device_get_compute_running_processes(d.handle, &n_infos, infos), out, &g)) {
        g.processes_known = true;
        for (unsigned k = 0; k < n_infos && k < 64; ++k)
          if (infos[k].used_gpu_memory != ~0ULL)  // NVML_VALUE_NOT_AVAILABLE
            g.processes.push_back({infos[k].pid, static_cast<double>(infos[k].used_gpu_memory)});
      }
    }
    if (d.gpm && !d.unsupported.count("gpm_metrics_get")) sample_gpm(i, d, g, out);
  }
  drain_xid_events(out);
  out.duration_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace stepscope::monitor
