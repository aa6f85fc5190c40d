// The exporter end to end, in process: fake NVML in, HTTP /metrics out.
#include "monitor/monitor_service.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

#include "cli_run.h"
#include "monitor/fake_nvml_env.h"
#include "monitor/http_get.h"
#include "monitor/push_client.h"
#include "monitor/running_monitor.h"

namespace stepscope::monitor {
namespace {

using testing::fake_nvml_path;
using testing::FakeNvml;

MonitorOptions options() {
  MonitorOptions o;
  o.listen = "127.0.0.1:0";
  o.push = "127.0.0.1:0";
  o.interval_seconds = 0.05;
  o.job = "gpt";
  o.nvml_library = fake_nvml_path();
  return o;
}

TEST(MonitorService, ServesGpuAndTrainingMetrics) {
  FakeNvml fake("gpus 8\nutil 90\nmemory_total 1000\nmemory_used 500\n");
  MonitorOptions o = options();
  o.mfu_model = "gpt3-175b";
  o.mfu_gpus = 8;
  Running m(o);
  PushClient c;
  ASSERT_TRUE(m.connect(c));
  TrainingUpdate u;
  u.step = 3;
  u.loss = 2.0;
  u.step_time = 2.0;
  u.tokens = 5000;
  ASSERT_TRUE(c.push(u));
  std::string text = m.scrape_until("stepscope_train_mfu_ratio{");
  EXPECT_NE(text.find("stepscope_gpu_utilization_ratio{gpu=\"7\""), std::string::npos) << text;
  EXPECT_NE(text.find("stepscope_monitor_gpus{hostname="), std::string::npos);
  EXPECT_NE(text.find("stepscope_train_step{hostname="), std::string::npos);
  EXPECT_NE(text.find("stepscope_train_tokens_per_second{hostname="), std::string::npos);
  // MFU: 2500 tokens/s × FLOPs/token of GPT-3 175B over 8 × the H200 bf16 peak; the exact value is
  // checked in mfu_test, here that the exporter shows a plausible fraction.
  size_t at = text.find("stepscope_train_mfu_ratio{");
  ASSERT_NE(at, std::string::npos);
  double mfu = std::stod(text.substr(text.find("} ", at) + 2));
  EXPECT_GT(mfu, 0.05);
  EXPECT_LT(mfu, 1.0);
}

TEST(MonitorService, PromtoolAcceptsTheExposition) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "promtool not on PATH (Debian package prometheus)";
  FakeNvml fake("gpus 2\nutil 90\ngpm 1\nsm_active 50\nthrottle 0x20\ngpu.0.process 1234 1e9\ngpu.1.xids 79\n"
                "gpu.1.error.power_usage 3\n");
  MonitorOptions o = options();
  o.alerts = true;
  o.mfu_model = "llama3-8b";
  Running m(o);
  PushClient c;
  ASSERT_TRUE(m.connect(c));
  TrainingUpdate u;
  u.step = 1;
  u.loss = std::nan("");
  u.step_time = 0.5;
  u.tokens = 1000;
  u.grad_norm = 1.5;
  u.loss_scale = 1024;
  ASSERT_TRUE(c.push(u));
  std::string text = m.scrape_until("stepscope_monitor_alert_firing{");
  testing::TempDir dir;
  std::string path = dir.write("metrics.txt", text);
  std::string cmd = "promtool check metrics < " + testing::shell_quote(path) + " > " + testing::shell_quote(dir.file("lint.txt")) + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << testing::read_file(dir.file("lint.txt"));
  EXPECT_NE(text.find("stepscope_gpu_last_xid{gpu=\"1\""), std::string::npos);
}

TEST(MonitorService, SurvivesABurstOf1000Scrapes) {
  FakeNvml fake("gpus 8\nutil 50\n");
  Running m(options());
  std::atomic<int> ok{0}, complete{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 125; ++i) {
        auto r = http_get("127.0.0.1", m.service.metrics_port(), "/metrics", 10000);
        if (r && r->status == 200) ++ok;
        if (r && r->body.find("stepscope_monitor_push_connections_total") != std::string::npos) ++complete;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 1000);
  EXPECT_EQ(complete.load(), 1000);
  EXPECT_NE(m.scrape().find("stepscope_gpu_up{gpu=\"0\""), std::string::npos);  // still serving and sampling
}

TEST(MonitorService, LostGpuBecomesMetricsAndALogLine) {
  FakeNvml fake("gpus 2\nutil 50\ngpu.0.error.power_usage 3\n");
  Running m(options());
  m.scrape_until("stepscope_gpu_up{gpu=\"1\"");
  fake.set("gpus 2\nutil 50\ngpu.0.error.power_usage 3\ngpu.1.lost 1\n");
  std::string text = m.scrape_until("error=\"GPU_IS_LOST\"");
  EXPECT_NE(text.find("stepscope_gpu_nvml_errors_total{error=\"GPU_IS_LOST\",gpu=\"1\""), std::string::npos) << text;
  EXPECT_NE(text.find("stepscope_gpu_nvml_errors_total{error=\"NOT_SUPPORTED\",gpu=\"0\",hostname="), std::string::npos);
  text = m.scrape_until("stepscope_gpu_up{gpu=\"1\",hostname=\"");
  EXPECT_NE(text.find("stepscope_gpu_up{gpu=\"1\""), std::string::npos);
  EXPECT_EQ(text.find("stepscope_gpu_utilization_ratio{gpu=\"1\""), std::string::npos) << "no stale value for a lost GPU";
  EXPECT_TRUE(m.logged("GPU 1: NVML utilization_rates failed: GPU_IS_LOST"));
  EXPECT_TRUE(m.logged("GPU 0: NVML power_usage failed: NOT_SUPPORTED"));
}

TEST(MonitorService, WithoutNvmlExportsTrainingMetricsOnly) {
  MonitorOptions o = options();
  o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  Running m(o);
  std::string text = m.scrape_until("stepscope_monitor_nvml_up{");
  EXPECT_NE(text.find("stepscope_monitor_nvml_up{hostname="), std::string::npos);
  EXPECT_NE(text.find("} 0\n", text.find("stepscope_monitor_nvml_up{")), std::string::npos);
  EXPECT_TRUE(m.logged("cannot load NVML"));
}

TEST(MonitorService, BuiltInAlertsFireAndShowAsMetrics) {
  FakeNvml fake("gpus 1\n");
  MonitorOptions o = options();
  o.alerts = true;
  Running m(o);
  PushClient c;
  ASSERT_TRUE(m.connect(c));
  TrainingUpdate u;
  u.step = 1;
  u.loss = std::nan("");
  ASSERT_TRUE(c.push(u));
  std::string text = m.scrape_until("alertname=\"StepscopeNanLoss\"");
  EXPECT_NE(text.find("stepscope_monitor_alert_firing{alertname=\"StepscopeNanLoss\",gpu=\"none\""), std::string::npos)
      << text;
  EXPECT_TRUE(m.logged("alert StepscopeNanLoss FIRING"));
}

TEST(MonitorService, BadAddressesAreOneLineErrors) {
  MonitorOptions o = options();
  o.push = "nonsense";
  MonitorService s(o, nullptr);
  std::string error;
  EXPECT_FALSE(s.start(error));
  EXPECT_NE(error.find("--push-listen"), std::string::npos) << error;
  o = options();
  o.interval_seconds = 0;
  MonitorService t(o, nullptr);
  EXPECT_FALSE(t.start(error));
  EXPECT_NE(error.find("--interval"), std::string::npos);
}

TEST(MonitorCli, PushFromTheShell) {
  FakeNvml fake("gpus 1\n");
  Running m(options());
  testing::TempDir dir;
  std::string to = "127.0.0.1:" + std::to_string(m.service.push_port());
  auto ok = testing::run_cli(dir, {"monitor", "push", "--to", to, "step=9", "loss=1.25", "step_time=0.3"});
  EXPECT_EQ(ok.exit_code, 0);
  auto bad = testing::run_cli(dir, {"monitor", "push", "--to", to, "step=9", "lr=1"});
  EXPECT_EQ(bad.exit_code, 1);
  ASSERT_FALSE(bad.err_lines.empty());
  EXPECT_NE(bad.err_lines[0].find("error unknown_key: unknown key \"lr\""), std::string::npos) << bad.err_lines[0];
  // Both pushes were answered, so both are in the state; the exporter shows them at its next pass.
  std::string text = m.scrape_until("reason=\"unknown_key\"} 1");
  EXPECT_NE(text.find("reason=\"unknown_key\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("stepscope_train_loss{hostname="), std::string::npos);
  EXPECT_NE(text.find("stepscope_train_step{hostname="), std::string::npos);
  auto nobody = testing::run_cli(dir, {"monitor", "push", "--to", "127.0.0.1:1", "step=1"});
  EXPECT_EQ(nobody.exit_code, 2);
}

TEST(MonitorCli, BadOptionsAreOneLineErrors) {
  testing::TempDir dir;
  auto model = testing::run_cli(dir, {"monitor", "--listen", "127.0.0.1:0", "--push-listen", "127.0.0.1:0",
                                      "--model", "no-such-model", "--nvml-lib", "/nonexistent", "--duration", "1"});
  EXPECT_EQ(model.exit_code, 2);
  ASSERT_FALSE(model.err_lines.empty());
  EXPECT_NE(model.err_lines.back().find("stepscope: error: monitor: --model: \"no-such-model\""), std::string::npos)
      << model.err_lines.back();
  auto gpu = testing::run_cli(dir, {"monitor", "--listen", "127.0.0.1:0", "--push-listen", "127.0.0.1:0", "--model",
                                    "llama3-8b", "--gpu", "voodoo", "--nvml-lib", "/nonexistent", "--duration", "1"});
  EXPECT_EQ(gpu.exit_code, 2);
  EXPECT_NE(gpu.err_lines.back().find("--gpu: unknown GPU \"voodoo\""), std::string::npos);
  auto port = testing::run_cli(dir, {"monitor", "--listen", "127.0.0.1:99999", "--nvml-lib", "/nonexistent"});
  EXPECT_EQ(port.exit_code, 2);
  auto ok = testing::run_cli(dir, {"monitor", "--listen", "127.0.0.1:0", "--push-listen", "127.0.0.1:0", "--nvml-lib",
                                   "/nonexistent", "--duration", "0.3", "--interval", "0.1"});
  EXPECT_EQ(ok.exit_code, 0);
}

}  // namespace
}  // namespace stepscope::monitor
