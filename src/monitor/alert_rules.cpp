#include "monitor/alert_rules.h"

#include <fmt/core.h>

namespace stepscope::monitor {

std::string prometheus_duration(int seconds) {
  if (seconds > 0 && seconds % 3600 == 0) return fmt::format("{}h", seconds / 3600);
  if (seconds > 0 && seconds % 60 == 0) return fmt::format("{}m", seconds / 60);
  return fmt::format("{}s", seconds);
}

std::string AlertRule::expr() const {
  const std::string w = prometheus_duration(window_seconds);
  switch (kind) {
    case AlertKind::kLossFluctuation:
      return fmt::format(
          "stddev_over_time(stepscope_train_loss[{0}]) / abs(avg_over_time(stepscope_train_loss[{0}])) > {1}", w,
          threshold);
    case AlertKind::kMemoryHigh:
      return fmt::format("stepscope_gpu_memory_used_bytes / stepscope_gpu_memory_total_bytes > {}", threshold);
    case AlertKind::kStepTimeRegression:
      return fmt::format(
          "avg_over_time(stepscope_train_step_time_seconds[{}]) > {} * avg_over_time(stepscope_train_step_time_seconds[{}] "
          "offset {})",
          w, threshold, prometheus_duration(baseline_seconds), prometheus_duration(baseline_offset_seconds));
    case AlertKind::kNanLoss:
      return fmt::format("increase(stepscope_train_nan_losses_total[{}]) > 0 or stepscope_train_loss != stepscope_train_loss",
                         w);
    case AlertKind::kGpuIdle:
      // SM activity from GPM where the GPU has it, else NVML's utilisation.
      return fmt::format(
          "(stepscope_gpu_sm_active_ratio or stepscope_gpu_utilization_ratio) < {} and on(hostname, job) "
          "rate(stepscope_train_steps_total[{}]) > 0",
          threshold, w);
    case AlertKind::kXidError:
      // The second half: a counter whose first scrape is already above 0
      // (an XID in the exporter's first interval), which increase() cannot see.
      return fmt::format(
          "increase(stepscope_gpu_xid_errors_total[{0}]) > 0 or (stepscope_gpu_xid_errors_total > 0 unless "
          "stepscope_gpu_xid_errors_total offset {0})",
          w);
    case AlertKind::kThrottle: {
      std::string alt;
      for (const auto& r : throttle_reasons) alt += (alt.empty() ? "" : "|") + r;
      return fmt::format("stepscope_gpu_throttle_active{{reason=~\"{}\"}} == 1", alt);
    }
  }
  return "";
}

// One initialiser per rule; fields in declaration order (designated
// initialisers), unnamed fields keep their defaults.
const std::vector<AlertRule>& alert_rules() {
  static const std::vector<AlertRule> rules = {
      {.name = "StepscopeLossFluctuating",
       .kind = AlertKind::kLossFluctuation,
       .threshold = 0.15,
       .window_seconds = 300,
       .severity = "warning",
       .summary = "Training loss fluctuates by more than 15% (std/mean) over 5 minutes"},
      {.name = "StepscopeGpuMemoryHigh",
       .kind = AlertKind::kMemoryHigh,
       .threshold = 0.95,
       .for_seconds = 180,
       .severity = "warning",
       .summary = "GPU memory above 95% of capacity for 3 minutes",
       .per_gpu = true},
      {.name = "StepscopeStepTimeRegression",
       .kind = AlertKind::kStepTimeRegression,
       .threshold = 4,  // up 300%
       .window_seconds = 60,
       .baseline_seconds = 900,
       .baseline_offset_seconds = 300,
       .for_seconds = 60,
       .severity = "warning",
       .summary = "Step time up more than 300% over its earlier 15-minute mean"},
      {.name = "StepscopeNanLoss",
       .kind = AlertKind::kNanLoss,
       .window_seconds = 300,
       .severity = "critical",
       .summary = "Training reported a NaN loss"},
      {.name = "StepscopeGpuIdle",
       .kind = AlertKind::kGpuIdle,
       .threshold = 0.2,
       .window_seconds = 300,
       .for_seconds = 300,
       .severity = "warning",
       .summary = "GPU SM activity below 20% for 5 minutes while the job reports steps",
       .per_gpu = true},
      {.name = "StepscopeXidError",
       .kind = AlertKind::kXidError,
       .window_seconds = 300,
       .severity = "critical",
       .summary = "The driver reported an XID error on the GPU",
       .per_gpu = true},
      {.name = "StepscopeGpuThermalThrottling",
       .kind = AlertKind::kThrottle,
       .for_seconds = 120,
       .severity = "warning",
       .throttle_reasons = {"hw_thermal", "sw_thermal"},
       .summary = "GPU clocks throttled for temperature for 2 minutes",
       .per_gpu = true},
      {.name = "StepscopeGpuPowerThrottling",
       .kind = AlertKind::kThrottle,
       .for_seconds = 120,
       .severity = "warning",
       .throttle_reasons = {"hw_power_brake", "sw_power_cap"},
       .summary = "GPU clocks throttled by the power limit or power brake for 2 minutes",
       .per_gpu = true},
  };
  return rules;
}

namespace {
// A YAML double-quoted scalar.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}
}  // namespace

std::string alert_rules_yaml() {
  // Written by hand rather than through a YAML library: the structure is
  // fixed and small, and every string is emitted double-quoted so no value
  // can change it. `promtool check rules` validates the result in the tests.
  std::string y =
      "# Generated by `stepscope monitor rules`; thresholds are documented in docs/monitor.md.\n"
      "groups:\n"
      "  - name: stepscope\n"
      "    rules:\n";
  for (const AlertRule& r : alert_rules()) {
    y += fmt::format("      - alert: {}\n", r.name);
    y += fmt::format("        expr: {}\n", quoted(r.expr()));
    if (r.for_seconds > 0) y += fmt::format("        for: {}\n", prometheus_duration(r.for_seconds));
    y += "        labels:\n";
    y += fmt::format("          severity: {}\n", quoted(r.severity));
    y += "        annotations:\n";
    y += fmt::format("          summary: {}\n", quoted(r.summary));
    std::string where = r.per_gpu ? "GPU {{ $labels.gpu }} ({{ $labels.uuid }}) on {{ $labels.hostname }}, job {{ $labels.job }}"
                                  : "job {{ $labels.job }} on {{ $labels.hostname }}";
    y += fmt::format("          description: {}\n", quoted(where));
  }
  return y;
}

}  // namespace stepscope::monitor
