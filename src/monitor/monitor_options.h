// What `stepscope monitor` is told to do, and the check of every value
// before any work starts (docs/monitor.md lists the ranges).
#pragma once

#include <string>

#include "monitor/push_server.h"

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
  PushLimits push_limits;
};

// Limits of the numeric options (inclusive).
constexpr double kMinInterval = 0.05, kMaxInterval = 3600;
constexpr double kMaxRunSeconds = 1e9;
constexpr int kMaxJobGpus = 1'000'000;
constexpr double kMinIdleTimeout = 1, kMaxIdleTimeout = 86400;
constexpr double kMinLineRate = 1, kMaxLineRate = 1e6;

// Empty when every option is usable, else one line naming the option.
std::string check_monitor_options(const MonitorOptions& o);

}  // namespace stepscope::monitor
