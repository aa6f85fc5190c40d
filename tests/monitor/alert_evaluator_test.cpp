// One scenario per built-in alert: it fires when its condition holds for its
// `for` time, and stays quiet just short of the threshold. The same
// scenarios run through Prometheus in tests/monitor/promtool/.
#include "monitor/alert_evaluator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace stepscope::monitor {
namespace {

// Feeds one point every 15 s for `minutes`; returns the changes seen.
std::vector<AlertChange> feed(AlertEvaluator& e, int minutes, const std::function<void(AlertPoint&, int)>& fill,
                              int start_s = 0) {
  std::vector<AlertChange> all;
  for (int t = start_s; t <= start_s + minutes * 60; t += 15) {
    AlertPoint p;
    p.time = t;
    fill(p, t);
    for (auto& c : e.observe(p)) all.push_back(c);
  }
  return all;
}

bool fired(const std::vector<AlertChange>& changes, const std::string& name, int gpu = -1) {
  for (const auto& c : changes)
    if (c.name == name && c.gpu == gpu && c.firing) return true;
  return false;
}

AlertGpuPoint gpu(int index) {
  AlertGpuPoint g;
  g.gpu = index;
  return g;
}

TEST(AlertEvaluator, LossFluctuating) {
  AlertEvaluator calm, wild;
  auto c = feed(calm, 10, [](AlertPoint& p, int t) { p.loss = 2.0 - t * 0.0005; });  // steady descent
  EXPECT_FALSE(fired(c, "StepscopeLossFluctuating"));
  auto w = feed(wild, 10, [](AlertPoint& p, int t) { p.loss = (t / 15) % 2 ? 1.4 : 1.0; });  // std/mean = 0.167
  EXPECT_TRUE(fired(w, "StepscopeLossFluctuating"));
}

TEST(AlertEvaluator, GpuMemoryHighNeedsThreeMinutes) {
  AlertEvaluator e;
  auto two = feed(e, 2, [](AlertPoint& p, int) {
    auto g = gpu(0);
    g.memory_used_ratio = 0.97;
    p.gpus = {g};
  });
  EXPECT_FALSE(fired(two, "StepscopeGpuMemoryHigh", 0));
  auto more = feed(e, 2, [](AlertPoint& p, int) {
    auto g = gpu(0);
    g.memory_used_ratio = 0.97;
    p.gpus = {g};
  }, 135);
  EXPECT_TRUE(fired(more, "StepscopeGpuMemoryHigh", 0));
  AlertEvaluator under;
  EXPECT_FALSE(fired(feed(under, 10, [](AlertPoint& p, int) {
                       auto g = gpu(0);
                       g.memory_used_ratio = 0.94;
                       p.gpus = {g};
                     }),
                     "StepscopeGpuMemoryHigh", 0));
}

TEST(AlertEvaluator, StepTimeUpThreeHundredPercent) {
  AlertEvaluator slow, slower;
  // 20 minutes at 1 s, then 5 s (+400%) / 3.5 s (+250%).
  auto a = feed(slow, 25, [](AlertPoint& p, int t) { p.step_time = t < 1200 ? 1.0 : 5.0; });
  EXPECT_TRUE(fired(a, "StepscopeStepTimeRegression"));
  auto b = feed(slower, 25, [](AlertPoint& p, int t) { p.step_time = t < 1200 ? 1.0 : 3.5; });
  EXPECT_FALSE(fired(b, "StepscopeStepTimeRegression"));
}

TEST(AlertEvaluator, NanLoss) {
  AlertEvaluator e;
  auto c = feed(e, 2, [](AlertPoint& p, int t) {
    p.loss = t == 60 ? std::nan("") : 2.0;
    p.nan_losses_total = t >= 60 ? 1 : 0;
  });
  EXPECT_TRUE(fired(c, "StepscopeNanLoss"));
  AlertEvaluator clean;
  EXPECT_FALSE(fired(feed(clean, 5, [](AlertPoint& p, int) { p.loss = 2.0; }), "StepscopeNanLoss"));
}

TEST(AlertEvaluator, GpuIdleOnlyWhileTheJobReportsSteps) {
  AlertEvaluator training, stopped;
  auto idle = [](AlertPoint& p) {
    auto g = gpu(1);
    g.busy_ratio = 0.1;
    p.gpus = {g};
  };
  auto a = feed(training, 8, [&](AlertPoint& p, int t) {
    idle(p);
    p.steps_total = t / 15;
  });
  EXPECT_TRUE(fired(a, "StepscopeGpuIdle", 1));
  auto b = feed(stopped, 8, [&](AlertPoint& p, int) {
    idle(p);
    p.steps_total = 40;  // no new steps: the job is not training
  });
  EXPECT_FALSE(fired(b, "StepscopeGpuIdle", 1));
}

TEST(AlertEvaluator, XidError) {
  AlertEvaluator e;
  auto c = feed(e, 3, [](AlertPoint& p, int t) {
    auto g = gpu(2);
    g.xid_total = t >= 60 ? 1 : 0;
    p.gpus = {g};
  });
  EXPECT_TRUE(fired(c, "StepscopeXidError", 2));
  // Resolves once the event is older than the 5 minute window.
  auto later = feed(e, 6, [](AlertPoint& p, int) {
    auto g = gpu(2);
    g.xid_total = 1;
    p.gpus = {g};
  }, 195);
  bool resolved = false;
  for (const auto& ch : later) resolved |= ch.name == "StepscopeXidError" && !ch.firing;
  EXPECT_TRUE(resolved);
}

TEST(AlertEvaluator, XidInTheFirstSample) {
  AlertEvaluator e;
  auto c = feed(e, 10, [](AlertPoint& p, int) {
    auto g = gpu(0);
    g.xid_total = 1;  // drained in the very first pass
    p.gpus = {g};
  });
  EXPECT_TRUE(fired(c, "StepscopeXidError", 0));
  EXPECT_TRUE(e.firing().empty());  // resolved once that first sample left the window
}

TEST(AlertEvaluator, ThermalAndPowerThrottling) {
  AlertEvaluator e;
  auto c = feed(e, 3, [](AlertPoint& p, int) {
    auto g = gpu(0);
    g.throttle_names = {"sw_thermal"};
    auto h = gpu(1);
    h.throttle_names = {"sw_power_cap"};
    auto k = gpu(2);
    k.throttle_names = {"gpu_idle"};
    p.gpus = {g, h, k};
  });
  EXPECT_TRUE(fired(c, "StepscopeGpuThermalThrottling", 0));
  EXPECT_FALSE(fired(c, "StepscopeGpuPowerThrottling", 0));
  EXPECT_TRUE(fired(c, "StepscopeGpuPowerThrottling", 1));
  EXPECT_FALSE(fired(c, "StepscopeGpuThermalThrottling", 2));
  EXPECT_FALSE(fired(c, "StepscopeGpuPowerThrottling", 2));
}

TEST(AlertEvaluator, EveryRuleHasAScenarioHere) {
  // Keeps this file and the rule table in step: a new rule needs a test above.
  std::vector<std::string> tested = {"StepscopeLossFluctuating",    "StepscopeGpuMemoryHigh", "StepscopeStepTimeRegression",
                                     "StepscopeNanLoss",            "StepscopeGpuIdle",       "StepscopeXidError",
                                     "StepscopeGpuThermalThrottling", "StepscopeGpuPowerThrottling"};
  ASSERT_EQ(alert_rules().size(), tested.size());
  for (size_t i = 0; i < tested.size(); ++i) EXPECT_EQ(alert_rules()[i].name, tested[i]);
}

}  // namespace
}  // namespace stepscope::monitor
