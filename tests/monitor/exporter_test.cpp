#include "monitor/exporter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <future>
#include <regex>

#include "monitor/http_get.h"

namespace stepscope::monitor {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

GpuSample gpu0() {
  GpuSample g;
  g.index = 0;
  g.uuid = "GPU-abc";
  g.utilization_ratio = 0.5;
  g.memory_used_bytes = 1e9;
  g.memory_total_bytes = 8e10;
  g.power_watts = 300;
  g.energy_joules = 1000;
  g.throttle_reasons = 0x40;  // hw_thermal
  g.processes_known = true;
  g.processes = {{4242, 5e8}};
  return g;
}

TEST(Exporter, FollowsPrometheusNamingAndLabels) {
  Exporter e("node1", "gpt");
  Sample s;
  s.gpus.push_back(gpu0());
  s.gpus[0].xids = {79};
  e.update_gpus(s);
  std::string text = e.render();
  const std::string l = "gpu=\"0\",hostname=\"node1\",job=\"gpt\",uuid=\"GPU-abc\"";
  EXPECT_TRUE(has_line(text, "# TYPE stepscope_gpu_utilization_ratio gauge")) << text;
  EXPECT_TRUE(has_line(text, "stepscope_gpu_utilization_ratio{" + l + "} 0.5")) << text;
  EXPECT_TRUE(has_line(text, "stepscope_gpu_memory_used_bytes{" + l + "} 1000000000")) << text;
  EXPECT_TRUE(has_line(text, "# TYPE stepscope_gpu_energy_joules_total counter")) << text;
  EXPECT_TRUE(has_line(text, "stepscope_gpu_energy_joules_total{" + l + "} 1000")) << text;
  EXPECT_TRUE(has_line(text, "stepscope_gpu_xid_errors_total{" + l + "} 1")) << text;
  EXPECT_TRUE(has_line(text, "stepscope_gpu_last_xid{" + l + "} 79")) << text;
  EXPECT_TRUE(has_line(text, "stepscope_gpu_up{" + l + "} 1")) << text;
  EXPECT_TRUE(has_line(text, "stepscope_gpu_throttle_active{gpu=\"0\",hostname=\"node1\",job=\"gpt\",reason=\"hw_thermal\",uuid=\"GPU-abc\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "stepscope_gpu_throttle_active{gpu=\"0\",hostname=\"node1\",job=\"gpt\",reason=\"sw_power_cap\",uuid=\"GPU-abc\"} 0")) << text;
  EXPECT_TRUE(has_line(text, "stepscope_gpu_process_memory_used_bytes{gpu=\"0\",hostname=\"node1\",job=\"gpt\",pid=\"4242\",uuid=\"GPU-abc\"} 500000000")) << text;
  // Every sample line: a stepscope_ name, labels, a number; counters end in _total.
  std::regex sample_line(R"(^stepscope_[a-z0-9_]+(\{[^}]*\})? (-?[0-9.e+]+|NaN|\+Inf|-Inf)$)");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line.rfind("# TYPE ", 0) == 0 && line.find(" counter") != std::string::npos) {
      std::string name = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0) << line;
    }
    if (line[0] == '#') continue;
    EXPECT_TRUE(std::regex_match(line, sample_line)) << line;
  }
}

TEST(Exporter, DeviceCountersGrowByDeltasAndMissingValuesDisappear) {
  Exporter e("h", "j");
  Sample s;
  s.gpus.push_back(gpu0());
  e.update_gpus(s);
  s.gpus[0].energy_joules = 1500;
  s.gpus[0].power_watts.reset();  // e.g. NOT_SUPPORTED from now on
  s.gpus[0].processes.clear();    // the process exited
  e.update_gpus(s);
  std::string text = e.render();
  EXPECT_NE(text.find("stepscope_gpu_energy_joules_total{gpu=\"0\",hostname=\"h\",job=\"j\",uuid=\"GPU-abc\"} 1500"),
            std::string::npos) << text;
  EXPECT_EQ(text.find("stepscope_gpu_power_watts{"), std::string::npos) << text;
  EXPECT_EQ(text.find("pid=\"4242\""), std::string::npos) << text;
  s.gpus[0].energy_joules = 200;  // driver reloaded: counter restarts from the new reading
  e.update_gpus(s);
  EXPECT_NE(e.render().find("stepscope_gpu_energy_joules_total{gpu=\"0\",hostname=\"h\",job=\"j\",uuid=\"GPU-abc\"} 1700"),
            std::string::npos);
}

TEST(Exporter, NvmlErrorsBecomeCountersAndLostGpusGoDown) {
  Exporter e("h", "j");
  Sample s;
  GpuSample g;
  g.index = 1;
  g.uuid = "GPU-x";
  g.lost = true;
  s.gpus.push_back(g);
  s.errors.push_back({1, "utilization_rates", "GPU_IS_LOST"});
  e.update_gpus(s);
  e.update_gpus(s);
  std::string text = e.render();
  EXPECT_NE(text.find("stepscope_gpu_nvml_errors_total{error=\"GPU_IS_LOST\",gpu=\"1\",hostname=\"h\",job=\"j\",query=\"utilization_rates\"} 2"),
            std::string::npos) << text;
  EXPECT_NE(text.find("stepscope_gpu_up{gpu=\"1\",hostname=\"h\",job=\"j\",uuid=\"GPU-x\"} 0"), std::string::npos);
}

TEST(Exporter, TrainingMetricsAndCountersStartAtZero) {
  Exporter e("h", "j");
  std::string before = e.render();
  EXPECT_NE(before.find("stepscope_train_steps_total{hostname=\"h\",job=\"j\"} 0"), std::string::npos) << before;
  EXPECT_NE(before.find("stepscope_monitor_push_rejected_total{hostname=\"h\",job=\"j\",reason=\"unknown_key\"} 0"),
            std::string::npos);
  EXPECT_NE(before.find("stepscope_monitor_push_rejected_total{hostname=\"h\",job=\"j\",reason=\"evicted\"} 0"),
            std::string::npos);
  EXPECT_EQ(before.find("stepscope_train_loss{"), std::string::npos);  // nothing pushed yet
  TrainingSnapshot t;
  t.last.step = 10;
  t.last.loss = std::nan("");
  t.last.step_time = 0.5;
  t.tokens_per_second = 8192;
  t.steps_total = 10;
  t.tokens_total = 40960;
  t.nan_loss_total = 1;
  t.rejected["syntax"] = 2;
  e.update_training(t, 0.42);
  std::string text = e.render();
  EXPECT_NE(text.find("stepscope_train_step{hostname=\"h\",job=\"j\"} 10"), std::string::npos) << text;
  // prometheus-cpp writes NaN as "Nan"; Prometheus parses it case-insensitively.
  EXPECT_NE(text.find("stepscope_train_loss{hostname=\"h\",job=\"j\"} Nan"), std::string::npos) << text;
  EXPECT_NE(text.find("stepscope_train_mfu_ratio{hostname=\"h\",job=\"j\"} 0.42"), std::string::npos);
  EXPECT_NE(text.find("stepscope_train_tokens_total{hostname=\"h\",job=\"j\"} 40960"), std::string::npos);
  EXPECT_NE(text.find("stepscope_train_nan_losses_total{hostname=\"h\",job=\"j\"} 1"), std::string::npos);
  EXPECT_NE(text.find("stepscope_monitor_push_rejected_total{hostname=\"h\",job=\"j\",reason=\"syntax\"} 2"),
            std::string::npos);
}

TEST(Exporter, FiringAlertsAreSeriesUntilResolved) {
  Exporter e("h", "j");
  e.update_alerts({{"StepscopeNanLoss", -1}, {"StepscopeXidError", 3}});
  std::string text = e.render();
  EXPECT_NE(text.find("stepscope_monitor_alert_firing{alertname=\"StepscopeXidError\",gpu=\"3\",hostname=\"h\",job=\"j\"} 1"),
            std::string::npos) << text;
  e.update_alerts({{"StepscopeXidError", 3}});
  text = e.render();
  EXPECT_EQ(text.find("StepscopeNanLoss"), std::string::npos);
  EXPECT_NE(text.find("StepscopeXidError"), std::string::npos);
}

TEST(Exporter, AScrapeDuringAPassWaitsForTheWholePass) {
  Exporter e("h", "j");
  std::string error;
  ASSERT_TRUE(e.listen({"127.0.0.1", 0}, error)) << error;
  auto pass = e.hold_scrapes();
  auto scrape = std::async(std::launch::async, [&] { return http_get("127.0.0.1", e.port(), "/metrics", 20000); });
  // While the pass is written the scrape cannot be answered, however fast the server is.
  EXPECT_EQ(scrape.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  Sample s;
  for (int i = 0; i < 8; ++i) {
    s.gpus.push_back(gpu0());
    s.gpus.back().index = i;
  }
  e.update_gpus(s);
  TrainingSnapshot t;
  t.tokens_per_second = 1000;
  e.update_training(t, 0.3);
  pass.unlock();
  auto r = scrape.get();
  ASSERT_TRUE(r.has_value());
  EXPECT_NE(r->body.find("stepscope_gpu_utilization_ratio{gpu=\"7\""), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("stepscope_train_mfu_ratio{hostname=\"h\",job=\"j\"} 0.3"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::monitor
