// The latest training metrics a job pushed, and running totals. Written by
// the push server's thread, read by the exporter and the alert evaluator.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "monitor/push_protocol.h"

namespace stepscope::monitor {

struct TrainingSnapshot {
  TrainingUpdate last;  // latest value of each field ever pushed
  double updates_total = 0;     // accepted lines
  double steps_total = 0;       // accepted lines that carried `step`
  double tokens_total = 0;      // sum of `tokens`
  double nan_loss_total = 0;    // lines whose loss was NaN
  std::optional<double> tokens_per_second;  // tokens / step_time of the latest line with both
  std::optional<double> last_update_time;   // seconds since the epoch
  std::map<std::string, double> rejected;   // by reason
  double connections_total = 0;
};

class TrainingState {
 public:
  void apply(const TrainingUpdate& u, double now_seconds);
  void reject(const std::string& reason);
  void connection();
  TrainingSnapshot snapshot() const;

 private:
  mutable std::mutex mu_;
  TrainingSnapshot s_;
};

}  // namespace stepscope::monitor
