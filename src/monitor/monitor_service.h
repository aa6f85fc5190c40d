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

namespace stepscope::monitor {

struct MonitorOptions {
  std::string listen = "127.0.0.1:9401";  // /metrics
  std::string push = "127.0.0.1:9402";    // training clients
  double interval_seconds = 1.0;
  std::string job = "default";
  std::string nvml_library = "libnvidia-ml.so.1";
  bool alerts = false;
  double run_seconds = 0;  // 0: until stopped
  // MFU from --model; the peak from --gpu, else from the name NVML gives GPU 0.
  std::string mfu_model, mfu_gpu, mfu_dtype = "bf16";
  int mfu_gpus = 0;  // 0: the GPUs NVML enumerates
};

class MonitorService {
 public:
  using Logger = std::function<void(const std::string&)>;
  MonitorService(MonitorOptions options, Logger log);
  ~MonitorService();
  // Binds both ports and loads NVML (a missing NVML is logged, not fatal:
  // training metrics are still exported). False with `error` on bad ports.
  bool start(std::string& error);
  // Samples until stop() or run_seconds; returns after the last pass.
  void run();
  void stop() { stop_ = true; }
  int metrics_port() const;
  int push_port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> stop_{false};
};

}  // namespace stepscope::monitor
