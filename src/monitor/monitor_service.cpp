#include "monitor/monitor_service.h"

#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "monitor/alert_evaluator.h"
#include "monitor/exporter.h"
#include "monitor/gpu_sampler.h"
#include "monitor/push_server.h"

namespace stepscope::monitor {
namespace {

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

const char* kThrottleNames[8] = {"gpu_idle",    "applications_clocks", "sw_power_cap", "hw_slowdown",
                                 "sync_boost", "sw_thermal",          "hw_thermal",   "hw_power_brake"};

}  // namespace

struct MonitorService::Impl {
  MonitorOptions options;
  Logger log;
  Exporter exporter;
  TrainingState training;
  PushServer push;
  std::unique_ptr<GpuSampler> sampler;
  AlertEvaluator evaluator;
  std::map<int, double> xid_totals;
  std::optional<MfuModel> mfu;
  Impl(MonitorOptions o, Logger l)
      : options(std::move(o)), log(std::move(l)), exporter(host_name(), options.job), push(training, options.push_limits) {}
};

namespace {

// Feeds one pass to the alert rules and logs what started or stopped firing.
void evaluate_alerts(AlertEvaluator& evaluator, std::map<int, double>& xid_totals, const MonitorService::Logger& log,
                     const Sample& sample, const TrainingSnapshot& t, double time) {
  AlertPoint p;
  p.time = time;
  p.loss = t.last.loss;
  p.step_time = t.last.step_time;
  p.steps_total = t.steps_total;
  p.nan_losses_total = t.nan_loss_total;
  for (const GpuSample& g : sample.gpus) {
    AlertGpuPoint a;
    a.gpu = g.index;
    if (g.memory_used_bytes && g.memory_total_bytes && *g.memory_total_bytes > 0)
      a.memory_used_ratio = *g.memory_used_bytes / *g.memory_total_bytes;
    a.busy_ratio = g.sm_active_ratio ? g.sm_active_ratio : g.utilization_ratio;
    a.xid_total = (xid_totals[g.index] += static_cast<double>(g.xids.size()));
    a.throttle_reasons = g.throttle_reasons.value_or(0);
    for (int b = 0; b < 8; ++b)
      if (a.throttle_reasons & (1ULL << b)) a.throttle_names.push_back(kThrottleNames[b]);
    p.gpus.push_back(std::move(a));
  }
  for (const AlertChange& c : evaluator.observe(p))
    log(fmt::format("alert {} {}{}: {}", c.name, c.firing ? "FIRING" : "resolved",
                    c.gpu >= 0 ? fmt::format(" (GPU {})", c.gpu) : "", c.summary));
}

}  // namespace

MonitorService::MonitorService(MonitorOptions options, Logger log)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(log))) {}

MonitorService::~MonitorService() { impl_->push.stop(); }

int MonitorService::metrics_port() const { return impl_->exporter.port(); }
int MonitorService::push_port() const { return impl_->push.port(); }

bool MonitorService::start(std::string& error) {
  try {
    return start_checked(error);
  } catch (const std::exception& e) {
    // Whatever a layer below throws (a model file the JSON reader chokes on)
    // ends as one line, never an abort.
    error = e.what();
    return false;
  }
}

bool MonitorService::start_checked(std::string& error) {
  Impl& m = *impl_;
  if (error = check_monitor_options(m.options); !error.empty()) return false;
  std::string unused;  // both parse: check_monitor_options said so
  auto listen_at = parse_host_port(m.options.listen, unused);
  auto push_at = parse_host_port(m.options.push, unused);
  if (!m.exporter.listen(*listen_at, error)) {
    error = "--listen: " + error;
    return false;
  }
  if (!m.push.start(*push_at, error)) {
    error = "--push-listen: " + error;
    return false;
  }
  m.sampler = std::make_unique<GpuSampler>(m.options.nvml_library, m.log);
  if (!m.sampler->ok()) {
    m.log(fmt::format("warning: {}; exporting training metrics only", m.sampler->error()));
    m.exporter.set_nvml_status(false, 0);
  } else {
    m.exporter.set_nvml_status(true, m.sampler->gpu_count());
    m.log(fmt::format("NVML: {} GPU(s)", m.sampler->gpu_count()));
  }
  if (!m.options.mfu_model.empty()) {
    const bool nvml = m.sampler->ok() && m.sampler->gpu_count() > 0;
    std::string gpu = !m.options.mfu_gpu.empty() ? m.options.mfu_gpu : nvml ? m.sampler->gpu_name(0) : "";
    int gpus = m.options.mfu_gpus > 0 ? m.options.mfu_gpus : std::max(1, nvml ? m.sampler->gpu_count() : 1);
    std::string why;
    try {
      m.mfu = make_mfu_model(m.options.mfu_model, gpu, m.options.mfu_dtype, gpus, why);
    } catch (const std::exception& e) {
      // The model reader must not throw, but if it does the file is named.
      error = fmt::format("--model: {}: cannot be read ({})", m.options.mfu_model, e.what());
      return false;
    }
    // A bad --model/--gpu/--dtype is the user's error; a GPU name missing
    // from the catalog only costs the MFU series.
    if (!m.mfu && (m.options.mfu_gpu.empty() && why.rfind("--gpu", 0) == 0)) {
      m.log(fmt::format("warning: MFU not exported: {} (give --gpu)", why));
    } else if (!m.mfu) {
      error = why;
      return false;
    } else {
      m.log(fmt::format("MFU: {} at {:.3g} FLOP/token over {} x {:.4g} TFLOP/s", m.mfu->model_name,
                        m.mfu->flops_per_token, m.mfu->gpus, m.mfu->peak_flops_per_gpu / 1e12));
    }
  }
  return true;
}

void MonitorService::run() {
  Impl& m = *impl_;
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto interval = std::chrono::duration<double>(m.options.interval_seconds);
  for (long pass = 0; !stop_; ++pass) {
    const auto due = start + std::chrono::duration_cast<clock::duration>(interval * static_cast<double>(pass));
    // Sleep in short slices so a signal stops the loop promptly.
    while (!stop_ && clock::now() < due) std::this_thread::sleep_for(std::min<clock::duration>(due - clock::now(), std::chrono::milliseconds(100)));
    if (stop_) break;
    if (m.options.run_seconds > 0 && std::chrono::duration<double>(clock::now() - start).count() > m.options.run_seconds) break;

    // NVML, the training state and the alert rules are read first; the
    // exporter is then written in one step so a scrape sees the whole pass.
    const bool nvml = m.sampler && m.sampler->ok();
    Sample sample = nvml ? m.sampler->sample() : Sample{};
    TrainingSnapshot t = m.training.snapshot();
    std::optional<double> mfu = m.mfu ? m.mfu->mfu(t.tokens_per_second) : std::nullopt;
    if (m.options.alerts) {
      const double now = std::chrono::duration<double>(clock::now() - start).count();
      evaluate_alerts(m.evaluator, m.xid_totals, m.log, sample, t, now);
    }

    auto pass_lock = m.exporter.hold_scrapes();
    if (nvml) m.exporter.update_gpus(sample);
    m.exporter.update_training(t, mfu);
    if (m.options.alerts) m.exporter.update_alerts(m.evaluator.firing());
  }
}

}  // namespace stepscope::monitor
