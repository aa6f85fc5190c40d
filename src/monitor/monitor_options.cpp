#include "monitor/monitor_options.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "monitor/host_port.h"

namespace stepscope::monitor {
namespace {

// NaN fails every comparison, so `in` also rejects it (and infinities).
bool in(double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; }

}  // namespace

std::string check_monitor_options(const MonitorOptions& o) {
  std::string error;
  if (!parse_host_port(o.listen, error)) return "--listen: " + error;
  if (!parse_host_port(o.push, error)) return "--push-listen: " + error;
  if (!in(o.interval_seconds, kMinInterval, kMaxInterval))
    return fmt::format("--interval: {} is not between {} and {} seconds", o.interval_seconds, kMinInterval, kMaxInterval);
  if (!in(o.run_seconds, 0, kMaxRunSeconds))
    return fmt::format("--duration: {} is not between 0 (run until signalled) and {:g} seconds", o.run_seconds,
                       kMaxRunSeconds);
  if (o.mfu_gpus < 0 || o.mfu_gpus > kMaxJobGpus)
    return fmt::format("--gpus: {} is not between 0 (the GPUs NVML sees) and {}", o.mfu_gpus, kMaxJobGpus);
  if (!in(o.push_limits.idle_timeout_seconds, kMinIdleTimeout, kMaxIdleTimeout))
    return fmt::format("--push-idle-timeout: {} is not between {:g} and {:g} seconds", o.push_limits.idle_timeout_seconds,
                       kMinIdleTimeout, kMaxIdleTimeout);
  if (!in(o.push_limits.lines_per_second, kMinLineRate, kMaxLineRate))
    return fmt::format("--push-max-rate: {} is not between {:g} and {:g} lines/s", o.push_limits.lines_per_second,
                       kMinLineRate, kMaxLineRate);
  if (o.push_limits.burst_lines != 0 && !in(o.push_limits.burst_lines, 1, 1e9))
    return "push burst: must be 0 (5 s of the rate) or between 1 and 1e9 lines";
  if (o.job.empty() || o.job.size() > 256 ||
      std::any_of(o.job.begin(), o.job.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
    return "--job: must be 1-256 characters without control characters";
  return {};
}

}  // namespace stepscope::monitor
