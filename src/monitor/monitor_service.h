// `stepscope monitor`'s main loop: every interval, sample the GPUs, fold in
// the training state, evaluate the built-in alerts if asked, and update the
// exporter. Runs until stop() (a signal) or for a fixed time (tests, bench).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "monitor/mfu.h"
#include "monitor/monitor_options.h"

namespace stepscope::monitor {

class MonitorService {
 public:
  using Logger = std::function<void(const std::string&)>;
  MonitorService(MonitorOptions options, Logger log);
  ~MonitorService();
  // Checks the options, binds both ports and loads NVML (a missing NVML is
  // logged, not fatal: training metrics are still exported). False with
  // `error` (one line) on a bad option, an unusable port or an unreadable
  // --model file; never throws.
  bool start(std::string& error);
  // Samples until stop() or run_seconds; returns after the last pass.
  void run();
  void stop() { stop_ = true; }
  int metrics_port() const;
  int push_port() const;

 private:
  bool start_checked(std::string& error);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> stop_{false};
};

}  // namespace stepscope::monitor
