// The alert rules, one table: `stepscope monitor rules` writes it as a
// Prometheus rule file and `stepscope monitor --alerts` evaluates the same
// rows itself (alert_evaluator.h) where no Prometheus runs. Each row's
// PromQL is built from the row's own threshold and windows, so the two
// cannot drift apart.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stepscope::monitor {

enum class AlertKind : uint8_t {
  kLossFluctuation,     // coefficient of variation of the loss over a window
  kMemoryHigh,          // used / total memory of a GPU
  kStepTimeRegression,  // recent mean step time over an earlier baseline
  kNanLoss,             // a NaN loss pushed
  kGpuIdle,             // SM activity low while the job reports steps
  kXidError,            // an XID event
  kThrottle,            // a clock-throttle reason active
};

struct AlertRule {
  std::string name;  // alertname, e.g. StepscopeGpuMemoryHigh
  AlertKind kind;
  double threshold = 0;        // meaning depends on kind (ratio, factor)
  int window_seconds = 0;      // range of *_over_time / increase / rate
  int baseline_seconds = 0;    // kStepTimeRegression: baseline range
  int baseline_offset_seconds = 0;
  int for_seconds = 0;         // how long the condition must hold
  std::string severity;        // warning | critical
  std::vector<std::string> throttle_reasons = {};  // kThrottle: reason label values
  std::string summary;
  bool per_gpu = false;  // true: one alert per GPU (labels gpu, uuid)

  std::string expr() const;  // PromQL
};

const std::vector<AlertRule>& alert_rules();

// "5m", "90s", "1h": Prometheus duration text.
std::string prometheus_duration(int seconds);

// The rule file (YAML) `monitor rules` writes.
std::string alert_rules_yaml();

}  // namespace stepscope::monitor
