// stepscope monitor beside a real Prometheus (Debian package `prometheus`;
// skipped without it): Prometheus scrapes the exporter on loopback, loads the
// rule file `monitor rules` writes, and fires the NaN-loss alert.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>

#include "cli_run.h"
#include "monitor/alert_rules.h"
#include "monitor/fake_nvml_env.h"
#include "monitor/push_client.h"
#include "monitor/running_monitor.h"

namespace stepscope::monitor {
namespace {

// A loopback port free right now (Prometheus cannot report a port 0 choice).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

TEST(PrometheusEndToEnd, ScrapesTheExporterAndFiresTheRules) {
  if (std::system("command -v prometheus >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "prometheus not on PATH (Debian package prometheus); end-to-end test skipped";
  testing::FakeNvml fake("gpus 2\nutil 90\n");
  MonitorOptions o;
  o.listen = "127.0.0.1:0";
  o.push = "127.0.0.1:0";
  o.interval_seconds = 0.2;
  o.job = "e2e";
  o.nvml_library = testing::fake_nvml_path();
  Running m(o);

  testing::TempDir dir;
  dir.write("stepscope_rules.yml", alert_rules_yaml());
  dir.write("prometheus.yml", "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n"
                              "  - stepscope_rules.yml\nscrape_configs:\n  - job_name: stepscope\n"
                              "    honor_labels: true\n    static_configs:\n      - targets: [\"127.0.0.1:" +
                                  std::to_string(m.service.metrics_port()) + "\"]\n");
  const int port = free_port();
  pid_t prom = fork();
  if (prom == 0) {
    std::string cfg = "--config.file=" + dir.file("prometheus.yml"), data = "--storage.tsdb.path=" + dir.file("data"),
                web = "--web.listen-address=127.0.0.1:" + std::to_string(port), log = dir.file("prometheus.log");
    FILE* f = std::freopen(log.c_str(), "w", stderr);
    (void)f;
    execlp("prometheus", "prometheus", cfg.c_str(), data.c_str(), web.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(prom, 0);

  PushClient c;
  ASSERT_TRUE(m.connect(c));
  TrainingUpdate u;
  u.step = 1;
  u.loss = std::nan("");
  ASSERT_TRUE(c.push(u));

  // Bounded wait (60 s): Prometheus starts, scrapes every second, evaluates every second.
  std::string gpus, alerts;
  for (int i = 0; i < 120; ++i) {
    if (auto r = http_get("127.0.0.1", port, "/api/v1/query?query=stepscope_monitor_gpus", 2000)) gpus = r->body;
    if (auto r = http_get("127.0.0.1", port, "/api/v1/alerts", 2000)) alerts = r->body;
    if (gpus.find("\"2\"") != std::string::npos && alerts.find("StepscopeNanLoss") != std::string::npos &&
        alerts.find("\"firing\"") != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ::kill(prom, SIGTERM);
  ::waitpid(prom, nullptr, 0);
  EXPECT_NE(gpus.find("\"job\":\"e2e\""), std::string::npos) << gpus << "\n" << testing::read_file(dir.file("prometheus.log"));
  EXPECT_NE(gpus.find("\"2\""), std::string::npos) << gpus;
  EXPECT_NE(alerts.find("\"alertname\":\"StepscopeNanLoss\""), std::string::npos) << alerts;
  EXPECT_NE(alerts.find("\"state\":\"firing\""), std::string::npos) << alerts;
}

}  // namespace
}  // namespace stepscope::monitor
