#include "monitor/training_state.h"

#include <cmath>

namespace stepscope::monitor {

void TrainingState::apply(const TrainingUpdate& u, double now_seconds) {
  std::lock_guard lock(mu_);
  auto keep = [](std::optional<double>& dst, const std::optional<double>& src) {
    if (src) dst = src;
  };
  keep(s_.last.step, u.step);
  keep(s_.last.loss, u.loss);
  keep(s_.last.step_time, u.step_time);
  keep(s_.last.tokens, u.tokens);
  keep(s_.last.grad_norm, u.grad_norm);
  keep(s_.last.loss_scale, u.loss_scale);
  s_.updates_total += 1;
  if (u.step) s_.steps_total += 1;
  if (u.tokens) s_.tokens_total += *u.tokens;
  if (u.loss && std::isnan(*u.loss)) s_.nan_loss_total += 1;
  // The protocol's ranges keep this finite (1e12 tokens / 1e-6 s at most);
  // the check keeps a future range change from exporting +Inf.
  if (u.tokens && u.step_time) {
    const double rate = *u.tokens / *u.step_time;
    if (std::isfinite(rate))
      s_.tokens_per_second = rate;
    else
      s_.tokens_per_second.reset();
  }
  s_.last_update_time = now_seconds;
}

void TrainingState::reject(const std::string& reason) {
  std::lock_guard lock(mu_);
  s_.rejected[reason] += 1;
}

void TrainingState::connection() {
  std::lock_guard lock(mu_);
  s_.connections_total += 1;
}

TrainingSnapshot TrainingState::snapshot() const {
  std::lock_guard lock(mu_);
  return s_;
}

}  // namespace stepscope::monitor
