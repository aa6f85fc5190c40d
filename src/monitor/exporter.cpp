#include "monitor/exporter.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <fmt/core.h>
#include <netdb.h>
#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <set>
#include <sstream>

#include "monitor/listen_socket.h"

namespace stepscope::monitor {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Labels;

namespace {

// Gauges that hold one optional value per GPU: present values are set,
// missing ones (not supported, GPU lost) removed so no stale number remains.
struct GpuGaugeSpec {
  const char* name;
  const char* help;
  std::optional<double> GpuSample::*field;
};

constexpr std::array<GpuGaugeSpec, 14> kGpuGauges{{
    {"stepscope_gpu_utilization_ratio", "Fraction of the last NVML sample period in which a kernel ran (0-1)",
     &GpuSample::utilization_ratio},
    {"stepscope_gpu_memory_copy_utilization_ratio", "Fraction of time device memory was read or written (0-1)",
     &GpuSample::memory_copy_ratio},
    {"stepscope_gpu_memory_used_bytes", "Device memory in use, bytes", &GpuSample::memory_used_bytes},
    {"stepscope_gpu_memory_total_bytes", "Device memory capacity, bytes", &GpuSample::memory_total_bytes},
    {"stepscope_gpu_power_watts", "Board power draw, watts", &GpuSample::power_watts},
    {"stepscope_gpu_sm_clock_hertz", "SM clock, hertz", &GpuSample::sm_clock_hertz},
    {"stepscope_gpu_memory_clock_hertz", "Memory clock, hertz", &GpuSample::memory_clock_hertz},
    {"stepscope_gpu_temperature_celsius", "GPU die temperature, degrees Celsius", &GpuSample::temperature_celsius},
    {"stepscope_gpu_pcie_rx_bytes_per_second", "PCIe receive throughput (NVML 20 ms window), bytes/s",
     &GpuSample::pcie_rx_bytes_per_second},
    {"stepscope_gpu_pcie_tx_bytes_per_second", "PCIe transmit throughput (NVML 20 ms window), bytes/s",
     &GpuSample::pcie_tx_bytes_per_second},
    {"stepscope_gpu_sm_active_ratio", "GPM: fraction of SM cycles with a resident warp, last interval (0-1)",
     &GpuSample::sm_active_ratio},
    {"stepscope_gpu_sm_occupancy_ratio", "GPM: resident warps over the SM maximum, last interval (0-1)",
     &GpuSample::sm_occupancy_ratio},
    {"stepscope_gpu_tensor_active_ratio", "GPM: fraction of cycles any tensor pipe was active, last interval (0-1)",
     &GpuSample::tensor_active_ratio},
    {"stepscope_gpu_dram_active_ratio", "GPM: DRAM bandwidth used over the peak, last interval (0-1)",
     &GpuSample::dram_active_ratio},
}};

struct GpuCounterSpec {
  const char* name;
  const char* help;
  std::optional<double> GpuSample::*field;
  const char* extra_label;  // nullptr or "type=corrected" style
};

constexpr std::array<GpuCounterSpec, 5> kGpuCounters{{
    {"stepscope_gpu_energy_joules_total", "Energy used since the driver loaded, joules", &GpuSample::energy_joules,
     nullptr},
    {"stepscope_gpu_nvlink_rx_bytes_total", "NVLink data received, all links, bytes", &GpuSample::nvlink_rx_bytes,
     nullptr},
    {"stepscope_gpu_nvlink_tx_bytes_total", "NVLink data sent, all links, bytes", &GpuSample::nvlink_tx_bytes, nullptr},
    {"stepscope_gpu_ecc_errors_total", "ECC errors since the driver loaded (volatile), by type",
     &GpuSample::ecc_corrected, "corrected"},
    {"stepscope_gpu_ecc_errors_total", "ECC errors since the driver loaded (volatile), by type",
     &GpuSample::ecc_uncorrected, "uncorrected"},
}};

struct ThrottleSpec {
  const char* reason;
  uint64_t bit;
};
constexpr std::array<ThrottleSpec, 8> kThrottleReasons{{
    {"gpu_idle", 0x1},
    {"applications_clocks", 0x2},
    {"sw_power_cap", 0x4},
    {"hw_slowdown", 0x8},
    {"sync_boost", 0x10},
    {"sw_thermal", 0x20},
    {"hw_thermal", 0x40},
    {"hw_power_brake", 0x80},
}};

// What the HTTP server collects: the registry, read under the pass lock.
class WholePassCollectable : public prometheus::Collectable {
 public:
  WholePassCollectable(std::shared_ptr<prometheus::Registry> registry, std::shared_ptr<std::mutex> pass)
      : registry_(std::move(registry)), pass_(std::move(pass)) {}
  std::vector<prometheus::MetricFamily> Collect() const override {
    std::lock_guard lock(*pass_);
    return registry_->Collect();
  }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<std::mutex> pass_;
};

constexpr std::array<const char*, 13> kRejectReasons{
    {"too_long", "syntax", "unknown_key", "duplicate_key", "not_a_number", "out_of_range", "empty", "incomplete",
     "too_many_clients", "rate_limited", "idle_timeout", "no_descriptors", "evicted"}};

// civetweb, the HTTP server under prometheus-cpp's Exposer, gives each
// connection a worker thread for as long as it is open. So that idle or slow
// clients cannot hold up a scrape: many workers (a thread costs stack address
// space, little memory), a request must arrive whole within 2 s of the
// connection, and no keep-alive (a worker is free again after each answer).
constexpr int kHttpWorkers = 128;
constexpr int kHttpRequestTimeoutMs = 2000;

}  // namespace

struct ExporterFamilies {
  std::map<std::string, Family<Gauge>*> gauges;
  std::map<std::string, Family<Counter>*> counters;
  // Series added per GPU (family, gpu) -> metric, so missing values can be removed.
  std::map<std::pair<Family<Gauge>*, int>, Gauge*> gpu_gauges;
  std::map<std::pair<int, unsigned>, Gauge*> process_gauges;  // (gpu, pid)
  std::map<std::pair<int, int>, Gauge*> throttle_gauges;      // (gpu, reason index)
  std::map<std::pair<std::string, int>, Gauge*> alert_gauges;
  std::map<std::string, Gauge*> train_gauges;
};

Exporter::Exporter(std::string hostname, std::string job)
    : hostname_(std::move(hostname)),
      job_(std::move(job)),
      registry_(std::make_shared<prometheus::Registry>()),
      f_(std::make_unique<ExporterFamilies>()) {
  auto gauge = [&](const std::string& name, const std::string& help) {
    f_->gauges[name] = &prometheus::BuildGauge().Name(name).Help(help).Register(*registry_);
  };
  auto counter = [&](const std::string& name, const std::string& help) {
    // prometheus-cpp appends nothing: the family name is the exposed name.
    f_->counters[name] = &prometheus::BuildCounter().Name(name).Help(help).Register(*registry_);
  };
  for (const auto& g : kGpuGauges) gauge(g.name, g.help);
  for (const auto& c : kGpuCounters)
    if (!f_->counters.count(c.name)) counter(c.name, c.help);
  gauge("stepscope_gpu_up", "1 while NVML answers for the GPU, 0 once it reports the GPU lost");
  gauge("stepscope_gpu_throttle_active", "1 while the clock-throttle reason is active (NVML), else 0");
  gauge("stepscope_gpu_process_memory_used_bytes", "Device memory used by one compute process, bytes");
  gauge("stepscope_gpu_last_xid", "The most recent XID error code seen on the GPU (0: none yet)");
  counter("stepscope_gpu_xid_errors_total", "XID critical-error events reported by the driver");
  counter("stepscope_gpu_nvml_errors_total", "Failed NVML calls, by call and NVML error");
  gauge("stepscope_monitor_nvml_up", "1 when the NVML library loaded and initialised, else 0");
  gauge("stepscope_monitor_gpus", "GPUs NVML enumerated");
  gauge("stepscope_monitor_sample_duration_seconds", "Wall time of the last sampling pass over all GPUs, seconds");
  counter("stepscope_monitor_samples_total", "Sampling passes done");
  counter("stepscope_monitor_push_rejected_total", "Push lines rejected, by reason");
  counter("stepscope_monitor_push_connections_total", "Push connections accepted");
  gauge("stepscope_monitor_alert_firing", "1 for each built-in alert (--alerts) firing now");
  gauge("stepscope_train_step", "Last optimizer step number pushed");
  gauge("stepscope_train_loss", "Last training loss pushed (NaN when the loss was NaN)");
  gauge("stepscope_train_step_time_seconds", "Wall time of the last step pushed, seconds");
  gauge("stepscope_train_tokens_per_second", "Tokens of the last step over its step time, tokens/s");
  gauge("stepscope_train_grad_norm", "Last gradient norm pushed");
  gauge("stepscope_train_loss_scale", "Last loss scale pushed");
  gauge("stepscope_train_mfu_ratio", "Model FLOPs utilisation: tokens/s x FLOPs per token / (GPUs x peak) (0-1)");
  gauge("stepscope_train_last_push_timestamp_seconds", "Unix time of the last accepted push, seconds");
  counter("stepscope_train_updates_total", "Push lines accepted");
  counter("stepscope_train_steps_total", "Push lines accepted that carried a step");
  counter("stepscope_train_tokens_total", "Tokens pushed, summed");
  counter("stepscope_train_nan_losses_total", "Push lines whose loss was NaN");

  // Series that alerts and increase() need from the start, at zero.
  Labels job_labels{{"hostname", hostname_}, {"job", job_}};
  for (const char* c : {"stepscope_train_updates_total", "stepscope_train_steps_total", "stepscope_train_tokens_total",
                        "stepscope_train_nan_losses_total", "stepscope_monitor_push_connections_total",
                        "stepscope_monitor_samples_total"})
    f_->counters[c]->Add(job_labels);
  for (const char* r : kRejectReasons) {
    Labels l = job_labels;
    l["reason"] = r;
    f_->counters["stepscope_monitor_push_rejected_total"]->Add(l);
  }
}

Exporter::~Exporter() = default;

bool Exporter::listen(const HostPort& where, std::string& error) {
  const std::string address = to_string(where);
  if (where.ipv6 && !mg_check_feature(8)) {
    error = fmt::format("{}: cannot serve /metrics (the civetweb library in use was built without IPv6; "
                        "give an IPv4 address)", address);
    return false;
  }
  // civetweb takes numeric addresses only, and says no more than "null
  // context" when it cannot bind: resolve the name and try the bind here
  // first, so a port in use or a foreign address gets its own reason.
  HostPort numeric = where;
  if (!where.ipv6) {
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (int rc = getaddrinfo(where.host.c_str(), nullptr, &hints, &res); rc != 0) {
      error = fmt::format("{}: cannot serve /metrics ({})", address, gai_strerror(rc));
      return false;
    }
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr, text, sizeof text);
    freeaddrinfo(res);
    numeric.host = text;
  }
  const int probe = open_listener(numeric, 1, error);
  if (probe < 0) return false;
  ::close(probe);
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
        "listening_ports", to_string(numeric),
        "num_threads", std::to_string(kHttpWorkers),
        "request_timeout_ms", std::to_string(kHttpRequestTimeoutMs),
        "enable_keep_alive", "no",
    });
    scrape_view_ = std::make_shared<WholePassCollectable>(registry_, pass_mu_);
    exposer_->RegisterCollectable(scrape_view_);
    return true;
  } catch (const std::exception& e) {
    error = fmt::format("{}: cannot serve /metrics ({})", address, e.what());
    return false;
  }
}

int Exporter::port() const {
  if (!exposer_) return 0;
  auto ports = exposer_->GetListeningPorts();
  return ports.empty() ? 0 : ports.front();
}

void Exporter::set_nvml_status(bool loaded, int gpus) {
  Labels l{{"hostname", hostname_}, {"job", job_}};
  f_->gauges["stepscope_monitor_nvml_up"]->Add(l).Set(loaded ? 1 : 0);
  f_->gauges["stepscope_monitor_gpus"]->Add(l).Set(gpus);
}

void Exporter::update_gpus(const Sample& s) {
  Labels host{{"hostname", hostname_}, {"job", job_}};
  f_->gauges["stepscope_monitor_sample_duration_seconds"]->Add(host).Set(s.duration_seconds);
  f_->counters["stepscope_monitor_samples_total"]->Add(host).Increment();
  for (const GpuSample& g : s.gpus) {
    Labels l{{"gpu", std::to_string(g.index)}, {"uuid", g.uuid}, {"hostname", hostname_}, {"job", job_}};
    f_->gauges["stepscope_gpu_up"]->Add(l).Set(g.lost ? 0 : 1);
    for (const auto& spec : kGpuGauges) {
      Family<Gauge>* fam = f_->gauges[spec.name];
      auto key = std::make_pair(fam, g.index);
      const std::optional<double>& v = g.*(spec.field);
      if (v) {
        Gauge*& slot = f_->gpu_gauges[key];
        if (!slot) slot = &fam->Add(l);
        slot->Set(*v);
      } else if (auto it = f_->gpu_gauges.find(key); it != f_->gpu_gauges.end()) {
        fam->Remove(it->second);
        f_->gpu_gauges.erase(it);
      }
    }
    for (const auto& spec : kGpuCounters) {
      const std::optional<double>& v = g.*(spec.field);
      if (!v) continue;
      Labels cl = l;
      if (spec.extra_label) cl["type"] = spec.extra_label;
      auto key = std::make_pair(std::string(spec.name) + (spec.extra_label ? spec.extra_label : ""), g.index);
      auto it = raw_.find(key);
      // The device counts since driver load: the first reading is the start
      // value; later ones add their growth (a smaller reading means a reset).
      double delta = it == raw_.end() ? *v : (*v >= it->second ? *v - it->second : *v);
      raw_[key] = *v;
      f_->counters[spec.name]->Add(cl).Increment(delta);
    }
    auto& throttle = *f_->gauges["stepscope_gpu_throttle_active"];
    for (size_t b = 0; b < kThrottleReasons.size(); ++b) {
      auto key = std::make_pair(g.index, static_cast<int>(b));
      auto it = f_->throttle_gauges.find(key);
      if (g.throttle_reasons) {
        if (it == f_->throttle_gauges.end()) {
          Labels tl = l;
          tl["reason"] = kThrottleReasons[b].reason;
          it = f_->throttle_gauges.emplace(key, &throttle.Add(tl)).first;
        }
        it->second->Set((*g.throttle_reasons & kThrottleReasons[b].bit) ? 1 : 0);
      } else if (it != f_->throttle_gauges.end()) {
        throttle.Remove(it->second);  // unknown now (GPU lost): no stale reason
        f_->throttle_gauges.erase(it);
      }
    }
    auto& xid_total = f_->counters["stepscope_gpu_xid_errors_total"]->Add(l);
    if (!g.xids.empty()) {
      xid_total.Increment(static_cast<double>(g.xids.size()));
      f_->gauges["stepscope_gpu_last_xid"]->Add(l).Set(static_cast<double>(g.xids.back()));
    } else {
      f_->gauges["stepscope_gpu_last_xid"]->Add(l);
    }
    // Per-process memory: one series per live pid; pids that left are removed.
    auto& procs = *f_->gauges["stepscope_gpu_process_memory_used_bytes"];
    std::set<unsigned> live;
    for (const ProcessMemory& p : g.processes) {
      live.insert(p.pid);
      Gauge*& slot = f_->process_gauges[{g.index, p.pid}];
      if (!slot) {
        Labels pl = l;
        pl["pid"] = std::to_string(p.pid);
        slot = &procs.Add(pl);
      }
      slot->Set(p.used_bytes);
    }
    for (auto it = f_->process_gauges.begin(); it != f_->process_gauges.end();) {
      if (it->first.first == g.index && !live.count(it->first.second)) {
        procs.Remove(it->second);
        it = f_->process_gauges.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const NvmlError& e : s.errors) {
    Labels l{{"gpu", e.gpu >= 0 ? std::to_string(e.gpu) : "none"}, {"query", e.query}, {"error", e.error},
             {"hostname", hostname_}, {"job", job_}};
    f_->counters["stepscope_gpu_nvml_errors_total"]->Add(l).Increment();
  }
}

void Exporter::update_training(const TrainingSnapshot& t, std::optional<double> mfu) {
  Labels l{{"hostname", hostname_}, {"job", job_}};
  auto set = [&](const char* name, const std::optional<double>& v) {
    if (!v) return;
    Gauge*& slot = f_->train_gauges[name];
    if (!slot) slot = &f_->gauges[name]->Add(l);
    slot->Set(*v);
  };
  set("stepscope_train_step", t.last.step);
  set("stepscope_train_loss", t.last.loss);
  set("stepscope_train_step_time_seconds", t.last.step_time);
  set("stepscope_train_tokens_per_second", t.tokens_per_second);
  set("stepscope_train_grad_norm", t.last.grad_norm);
  set("stepscope_train_loss_scale", t.last.loss_scale);
  set("stepscope_train_mfu_ratio", mfu);
  set("stepscope_train_last_push_timestamp_seconds", t.last_update_time);
  auto grow = [&](const std::string& name, const Labels& labels, const std::string& key, double total) {
    double& last = train_raw_[key];
    if (total > last) f_->counters[name]->Add(labels).Increment(total - last);
    last = total;
  };
  grow("stepscope_train_updates_total", l, "updates", t.updates_total);
  grow("stepscope_train_steps_total", l, "steps", t.steps_total);
  grow("stepscope_train_tokens_total", l, "tokens", t.tokens_total);
  grow("stepscope_train_nan_losses_total", l, "nan", t.nan_loss_total);
  grow("stepscope_monitor_push_connections_total", l, "connections", t.connections_total);
  for (const auto& [reason, n] : t.rejected) {
    Labels rl = l;
    rl["reason"] = reason;
    grow("stepscope_monitor_push_rejected_total", rl, "rejected:" + reason, n);
  }
}

void Exporter::update_alerts(const std::vector<std::pair<std::string, int>>& firing) {
  auto& fam = *f_->gauges["stepscope_monitor_alert_firing"];
  std::set<std::pair<std::string, int>> now(firing.begin(), firing.end());
  for (auto it = f_->alert_gauges.begin(); it != f_->alert_gauges.end();) {
    if (!now.count(it->first)) {
      fam.Remove(it->second);
      it = f_->alert_gauges.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& key : now) {
    Gauge*& slot = f_->alert_gauges[key];
    if (!slot)
      slot = &fam.Add({{"alertname", key.first}, {"gpu", key.second >= 0 ? std::to_string(key.second) : "none"},
                       {"hostname", hostname_}, {"job", job_}});
    slot->Set(1);
  }
}

std::string Exporter::render() const {
  prometheus::TextSerializer serializer;
  return serializer.Serialize(WholePassCollectable(registry_, pass_mu_).Collect());
}

std::vector<std::string> Exporter::metric_names() {
  Exporter e("h", "j");
  std::vector<std::string> names;
  for (const auto& [name, fam] : e.f_->gauges) names.push_back(name);
  for (const auto& [name, fam] : e.f_->counters) names.push_back(name);
  return names;
}

}  // namespace stepscope::monitor
