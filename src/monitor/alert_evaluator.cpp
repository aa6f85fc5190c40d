#include "monitor/alert_evaluator.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace stepscope::monitor {
namespace {

// Values of `get` over the points with time in (from, to].
template <typename Get>
std::vector<double> window(const std::deque<AlertPoint>& h, double from, double to, Get get) {
  std::vector<double> v;
  for (const AlertPoint& p : h)
    if (p.time > from && p.time <= to)
      if (std::optional<double> x = get(p)) v.push_back(*x);
  return v;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// A counter grew inside the window (what increase() > 0 / rate() > 0 say).
bool increased(const std::vector<double>& v) { return v.size() >= 2 && v.back() > v.front(); }

const AlertGpuPoint* gpu_of(const AlertPoint& p, int gpu) {
  for (const AlertGpuPoint& g : p.gpus)
    if (g.gpu == gpu) return &g;
  return nullptr;
}

}  // namespace

bool AlertEvaluator::condition(const AlertRule& r, int gpu, double now) const {
  const AlertPoint& last = history_.back();
  const double w = r.window_seconds;
  switch (r.kind) {
    case AlertKind::kLossFluctuation: {
      auto v = window(history_, now - w, now, [](const AlertPoint& p) { return p.loss; });
      if (v.size() < 2) return false;
      double m = mean(v), var = 0;
      for (double x : v) var += (x - m) * (x - m);
      double cv = std::sqrt(var / static_cast<double>(v.size())) / std::fabs(m);
      return cv > r.threshold;  // NaN compares false, as in PromQL
    }
    case AlertKind::kMemoryHigh: {
      const AlertGpuPoint* g = gpu_of(last, gpu);
      return g && g->memory_used_ratio && *g->memory_used_ratio > r.threshold;
    }
    case AlertKind::kStepTimeRegression: {
      auto recent = window(history_, now - w, now, [](const AlertPoint& p) { return p.step_time; });
      double base_to = now - r.baseline_offset_seconds;
      auto base = window(history_, base_to - r.baseline_seconds, base_to, [](const AlertPoint& p) { return p.step_time; });
      return !recent.empty() && !base.empty() && mean(recent) > r.threshold * mean(base);
    }
    case AlertKind::kNanLoss: {
      if (last.loss && std::isnan(*last.loss)) return true;
      return increased(window(history_, now - w, now, [](const AlertPoint& p) { return std::optional(p.nan_losses_total); }));
    }
    case AlertKind::kGpuIdle: {
      const AlertGpuPoint* g = gpu_of(last, gpu);
      if (!g || !g->busy_ratio || !(*g->busy_ratio < r.threshold)) return false;
      return increased(window(history_, now - w, now, [](const AlertPoint& p) { return std::optional(p.steps_total); }));
    }
    case AlertKind::kXidError: {
      auto xids = [gpu](const AlertPoint& p) -> std::optional<double> {
        const AlertGpuPoint* g = gpu_of(p, gpu);
        return g ? std::optional(g->xid_total) : std::nullopt;
      };
      if (increased(window(history_, now - w, now, xids))) return true;
      // A series whose first value is already above 0, first seen inside the window.
      for (const AlertPoint& p : history_)
        if (auto v = xids(p)) return p.time > now - w && *v > 0;
      return false;
    }
    case AlertKind::kThrottle: {
      const AlertGpuPoint* g = gpu_of(last, gpu);
      if (!g) return false;
      for (const auto& name : g->throttle_names)
        if (std::find(r.throttle_reasons.begin(), r.throttle_reasons.end(), name) != r.throttle_reasons.end()) return true;
      return false;
    }
  }
  return false;
}

std::vector<AlertChange> AlertEvaluator::observe(const AlertPoint& p) {
  history_.push_back(p);
  // Keep the longest range any rule reads (the step-time baseline), plus slack.
  double keep = 0;
  for (const AlertRule& r : rules_)
    keep = std::max<double>(keep, std::max(r.window_seconds, r.baseline_seconds + r.baseline_offset_seconds));
  while (history_.size() > 1 && history_.front().time < p.time - keep - 60) history_.pop_front();

  std::vector<AlertChange> changes;
  std::set<std::pair<std::string, int>> seen;
  for (const AlertRule& r : rules_) {
    std::vector<int> slots;
    if (r.per_gpu)
      for (const AlertGpuPoint& g : p.gpus) slots.push_back(g.gpu);
    else
      slots.push_back(-1);
    for (int gpu : slots) {
      if (!condition(r, gpu, p.time)) continue;
      auto key = std::make_pair(r.name, gpu);
      seen.insert(key);
      auto [it, fresh] = active_.try_emplace(key, State{p.time, false});
      if (!it->second.firing && p.time - it->second.active_since >= r.for_seconds) {
        it->second.firing = true;
        changes.push_back({r.name, gpu, true, r.summary});
      }
    }
  }
  for (auto it = active_.begin(); it != active_.end();) {
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    if (it->second.firing) {
      std::string summary;
      for (const AlertRule& r : rules_)
        if (r.name == it->first.first) summary = r.summary;
      changes.push_back({it->first.first, it->first.second, false, summary});
    }
    it = active_.erase(it);
  }
  return changes;
}

std::vector<std::pair<std::string, int>> AlertEvaluator::firing() const {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& [key, st] : active_)
    if (st.firing) out.push_back(key);
  return out;
}

}  // namespace stepscope::monitor
