// Overhead of `stepscope monitor` (docs/performance.md, issue #7): CPU time of
// the exporter process over a fixed run with 8 fake GPUs at a 1 s interval,
// a training client pushing 10 steps/s and a Prometheus-like scrape every
// 15 s; the same with NVML missing (the sampling cost is the difference);
// then the latency of 1000 back-to-back scrapes (p50, p99).
//
//   bench_monitor [SECONDS]   (default 30)
#include <fmt/core.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "monitor/http_get.h"
#include "monitor/push_client.h"

namespace {

using namespace stepscope::monitor;
using clock_type = std::chrono::steady_clock;

constexpr int kMetricsPort = 19461, kPushPort = 19462;

// utime + stime of `pid`, seconds (from /proc/PID/stat).
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string f;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::stod(f);
    if (i == 15) stime = std::stod(f);
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

pid_t start_monitor(const std::string& nvml) {
  pid_t pid = fork();
  if (pid == 0) {
    std::string listen = fmt::format("127.0.0.1:{}", kMetricsPort), push = fmt::format("127.0.0.1:{}", kPushPort);
    execl(STEPSCOPE_CLI_PATH, "stepscope", "monitor", "--listen", listen.c_str(), "--push-listen", push.c_str(),
          "--interval", "1", "--nvml-lib", nvml.c_str(), "--model", "llama3-8b", "--gpu", "h200-sxm", "--gpus", "8",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 100 && !http_get("127.0.0.1", kMetricsPort, "/metrics", 200); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return pid;
}

void stop(pid_t pid) {
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
}

// Percent of one core the monitor used over `seconds` of steady work.
double overhead(const std::string& nvml, int seconds, size_t& metrics_bytes) {
  pid_t pid = start_monitor(nvml);
  PushClient client;
  std::string error;
  if (!client.connect(fmt::format("127.0.0.1:{}", kPushPort), error)) fmt::print(stderr, "push: {}\n", error);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // past start-up
  double cpu0 = cpu_seconds(pid);
  auto t0 = clock_type::now();
  int step = 0;
  while (clock_type::now() - t0 < std::chrono::seconds(seconds)) {
    TrainingUpdate u;
    u.step = ++step;
    u.loss = 2.0;
    u.step_time = 0.1;
    u.tokens = 65536;
    client.push(u);
    if (step % 150 == 0)
      if (auto r = http_get("127.0.0.1", kMetricsPort, "/metrics")) metrics_bytes = r->body.size();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  double wall = std::chrono::duration<double>(clock_type::now() - t0).count();
  double cpu = cpu_seconds(pid) - cpu0;
  stop(pid);
  return 100.0 * cpu / wall;
}

}  // namespace

int main(int argc, char** argv) {
  int seconds = argc > 1 ? std::atoi(argv[1]) : 30;
  std::string dir = "/tmp/stepscope_bench_monitor_" + std::to_string(getpid());
  std::system(("mkdir -p " + dir).c_str());
  std::string cfg = dir + "/fake_nvml.cfg";
  std::ofstream(cfg) << "gpus 8\nutil 90\nmemory_total 150000000000\nmemory_used 120000000000\npower_mw 650000\n"
                        "energy_mj 1000000\nsm_clock 1980\nmem_clock 2619\ntemp 60\npcie_rx_kbps 1000\n"
                        "pcie_tx_kbps 1000\nnvlink_rx_kib 100\nnvlink_tx_kib 100\nthrottle 0x4\ngpm 1\nsm_active 80\n"
                        "sm_occupancy 40\ntensor_active 60\ndram_active 30\ngpu.0.process 1234 8e10\n";
  setenv("STEPSCOPE_FAKE_NVML", cfg.c_str(), 1);

  size_t bytes8 = 0, bytes0 = 0;
  double with_gpus = overhead(STEPSCOPE_FAKE_NVML_PATH, seconds, bytes8);
  double without = overhead("/nonexistent/libnvidia-ml.so.1", seconds, bytes0);
  fmt::print("exporter CPU, 8 fake GPUs, 1 s interval, 10 pushes/s, scrape/15 s: {:.3f}% of one core ({} s)\n",
             with_gpus, seconds);
  fmt::print("exporter CPU, no NVML (training metrics only), same load:        {:.3f}% of one core\n", without);
  fmt::print("/metrics size: {} bytes with 8 GPUs, {} bytes without\n", bytes8, bytes0);

  pid_t pid = start_monitor(STEPSCOPE_FAKE_NVML_PATH);
  std::vector<double> ms;
  int failed = 0;
  for (int i = 0; i < 1000; ++i) {
    auto t = clock_type::now();
    auto r = http_get("127.0.0.1", kMetricsPort, "/metrics");
    if (!r || r->status != 200) ++failed;
    ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t).count());
  }
  stop(pid);
  std::sort(ms.begin(), ms.end());
  fmt::print("scrape latency over 1000 scrapes (8 GPUs): p50 {:.3f} ms, p99 {:.3f} ms, max {:.3f} ms, failed {}\n",
             ms[499], ms[989], ms.back(), failed);
  std::system(("rm -rf " + dir).c_str());
  return failed == 0 ? 0 : 1;
}
