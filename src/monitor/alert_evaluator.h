// `stepscope monitor --alerts`: the rules of alert_rules() evaluated in
// process, for hosts without Prometheus. It keeps a short history of what the
// monitor sampled (as Prometheus would have scraped it) and applies each
// rule's condition and `for` duration with the same thresholds and windows.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "monitor/alert_rules.h"

namespace stepscope::monitor {

struct AlertGpuPoint {
  int gpu = 0;
  std::optional<double> memory_used_ratio;  // used / total
  std::optional<double> busy_ratio;         // GPM SM activity, else utilisation
  double xid_total = 0;
  uint64_t throttle_reasons = 0;
  std::vector<std::string> throttle_names;  // reason labels active now
};

struct AlertPoint {
  double time = 0;  // seconds
  std::optional<double> loss, step_time;
  double steps_total = 0, nan_losses_total = 0;
  std::vector<AlertGpuPoint> gpus;
};

struct AlertChange {
  std::string name;
  int gpu = -1;  // -1: job-level alert
  bool firing = false;  // true: started firing; false: resolved
  std::string summary;
};

class AlertEvaluator {
 public:
  explicit AlertEvaluator(std::vector<AlertRule> rules = alert_rules()) : rules_(std::move(rules)) {}
  // Adds a point (times must not decrease) and returns the alerts that
  // started or stopped firing at it.
  std::vector<AlertChange> observe(const AlertPoint& p);
  // (alertname, gpu) pairs firing now.
  std::vector<std::pair<std::string, int>> firing() const;

 private:
  bool condition(const AlertRule& r, int gpu_slot, double now) const;
  std::vector<AlertRule> rules_;
  std::deque<AlertPoint> history_;
  struct State {
    double active_since = 0;
    bool firing = false;
  };
  std::map<std::pair<std::string, int>, State> active_;  // conditions true now, by (alert, gpu)
};

}  // namespace stepscope::monitor
