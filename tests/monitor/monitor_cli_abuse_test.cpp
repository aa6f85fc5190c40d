// `stepscope monitor` and `monitor push` as a user's shell runs them, with bad
// options, a port in use, an unreadable model file and too few descriptors.
// Every run is bounded (timeout -s KILL), so a monitor that ignores a bad
// --duration fails the test instead of hanging it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "cli_run.h"
#include "monitor/fake_nvml_env.h"
#include "monitor/http_get.h"
#include "monitor/running_monitor.h"

namespace stepscope::monitor {
namespace {

using Clock = std::chrono::steady_clock;
using testing::shell_quote;

struct CliResult {
  int exit_code = -1;
  std::vector<std::string> err_lines;
};

// The CLI with `args`, killed after `limit_s` (exit 137 then).
CliResult run_bounded(const testing::TempDir& dir, const std::vector<std::string>& args, int limit_s = 15) {
  std::string cmd = "timeout -s KILL " + std::to_string(limit_s) + " " + shell_quote(testing::cli_path());
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += " >/dev/null 2>" + shell_quote(dir.file("err.txt"));
  CliResult r;
  testing::run_shell(cmd, r.exit_code);
  std::istringstream in(testing::read_file(dir.file("err.txt")));
  for (std::string line; std::getline(in, line);) r.err_lines.push_back(line);
  return r;
}

std::vector<std::string> quiet(std::vector<std::string> args) {
  for (const char* a : {"--nvml-lib", "/nonexistent", "--duration", "1"}) args.push_back(a);
  return args;
}

TEST(MonitorCliAbuse, EveryBadOptionIsOneLineBeforeAnyWork) {
  testing::TempDir dir;
  struct Case {
    std::vector<std::string> args;
    const char* says;
  } cases[] = {
      {{"monitor", "--nvml-lib", "/nonexistent", "--listen", "127.0.0.1:0", "--push-listen", "127.0.0.1:0",
        "--duration", "-5"},
       "--duration: -5 is not between 0"},  // ran for ever
      {{"monitor", "--nvml-lib", "/nonexistent", "--listen", "127.0.0.1:0", "--push-listen", "127.0.0.1:0",
        "--duration", "nan"},
       "--duration"},
      {{"monitor", "--nvml-lib", "/nonexistent", "--listen", "127.0.0.1:0", "--push-listen", "127.0.0.1:0",
        "--duration", "inf"},
       "--duration"},
      {quiet({"monitor", "--interval", "nan"}), "--interval"},
      {quiet({"monitor", "--interval", "0.001"}), "--interval"},
      {quiet({"monitor", "--gpus", "-3"}), "--gpus: -3 is not between 0"},
      {quiet({"monitor", "--push-idle-timeout", "0"}), "--push-idle-timeout"},
      {quiet({"monitor", "--push-max-rate", "1e9"}), "--push-max-rate"},
      {quiet({"monitor", "--listen", "127.0.0.1:1,0.0.0.0:2"}), "--listen: \"127.0.0.1:1,0.0.0.0:2\": one HOST:PORT only"},
      {quiet({"monitor", "--listen", ":9401"}), "--listen: \":9401\": empty host"},
      {quiet({"monitor", "--listen", "127.0.0.1:99999"}), "--listen: \"127.0.0.1:99999\": the port must be"},
      {quiet({"monitor", "--listen", "127.0.0.1:9401 "}), "--listen"},
      {quiet({"monitor", "--push-listen", "[::1]9400"}), "--push-listen"},
      {quiet({"monitor", "--job", ""}), "--job"},
  };
  for (const Case& c : cases) {
    const CliResult r = run_bounded(dir, c.args);
    std::string shown;
    for (const auto& a : c.args) shown += a + " ";
    EXPECT_EQ(r.exit_code, 2) << shown;
    ASSERT_EQ(r.err_lines.size(), 1u) << shown << (r.err_lines.empty() ? "" : r.err_lines.back());
    EXPECT_EQ(r.err_lines[0].rfind("stepscope: error: monitor: ", 0), 0u) << r.err_lines[0];
    EXPECT_NE(r.err_lines[0].find(c.says), std::string::npos) << shown << "-> " << r.err_lines[0];
  }
}

TEST(MonitorCliAbuse, APortInUseNamesTheAddressAndTheReason) {
  int taken = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(taken, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(taken, 1), 0);
  socklen_t len = sizeof a;
  ::getsockname(taken, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string address = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  testing::TempDir dir;
  for (const char* flag : {"--listen", "--push-listen"}) {
    std::vector<std::string> args{"monitor", "--listen", "127.0.0.1:0", "--push-listen", "127.0.0.1:0"};
    args[std::string(flag) == "--listen" ? 2 : 4] = address;
    const CliResult r = run_bounded(dir, quiet(args));
    EXPECT_EQ(r.exit_code, 2) << flag;
    ASSERT_FALSE(r.err_lines.empty()) << flag;
    EXPECT_EQ(r.err_lines.back(),
              "stepscope: error: monitor: " + std::string(flag) + ": " + address + ": cannot listen (Address already in use)");
  }
  ::close(taken);
}

TEST(MonitorCliAbuse, PushExitsNonZeroAndPrintsTheErrorWhenAnyLineIsRejected) {
  testing::FakeNvml fake("gpus 1\n");
  MonitorOptions o;
  o.listen = o.push = "127.0.0.1:0";
  o.interval_seconds = 0.05;
  o.nvml_library = testing::fake_nvml_path();
  Running m(o);
  testing::TempDir dir;
  const std::string to = "127.0.0.1:" + std::to_string(m.service.push_port());
  // A line break inside an argument makes two lines: the second was rejected
  // unseen and the command exited 0.
  const CliResult r = run_bounded(dir, {"monitor", "push", "--to", to, "step=1\nlr=2"});
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_EQ(r.err_lines.size(), 1u);
  EXPECT_EQ(r.err_lines[0].rfind("stepscope: error: monitor push: error unknown_key: unknown key \"lr\"", 0), 0u)
      << r.err_lines[0];
  const CliResult range = run_bounded(dir, {"monitor", "push", "--to", to, "tokens=1e15", "step_time=5e-324"});
  EXPECT_EQ(range.exit_code, 1);
  ASSERT_EQ(range.err_lines.size(), 1u);
  EXPECT_NE(range.err_lines[0].find("error out_of_range: "), std::string::npos) << range.err_lines[0];
  const CliResult bad_to = run_bounded(dir, {"monitor", "push", "--to", "127.0.0.1:1,127.0.0.1:2", "step=1"});
  EXPECT_EQ(bad_to.exit_code, 2);
}

TEST(MonitorCliAbuse, Ipv6PushEndToEnd) {
  testing::FakeNvml fake("gpus 1\n");
  MonitorOptions o;
  o.listen = "127.0.0.1:0";
  o.push = "[::1]:0";
  o.interval_seconds = 0.05;
  o.nvml_library = testing::fake_nvml_path();
  MonitorService probe(o, [](const std::string&) {});
  std::string error;
  if (!probe.start(error)) GTEST_SKIP() << "no IPv6 loopback here: " << error;
  probe.stop();
  Running m(o);
  testing::TempDir dir;
  const CliResult r = run_bounded(dir, {"monitor", "push", "--to", "[::1]:" + std::to_string(m.service.push_port()), "step=41"});
  EXPECT_EQ(r.exit_code, 0) << (r.err_lines.empty() ? "" : r.err_lines[0]);
  const std::string text = m.scrape_until("stepscope_train_step{");
  EXPECT_NE(text.find("} 41\n", text.find("stepscope_train_step{")), std::string::npos) << text;
}

TEST(MonitorCliAbuse, AModelFileTheReaderCannotTakeIsOneLineNamingIt) {
  testing::TempDir dir;
  const std::string model = dir.write("huge.json",
                                      "{\"name\": \"huge\", \"layers\": 1e309, \"hidden\": 4096, \"heads\": 32, "
                                      "\"seq\": 4096, \"vocab\": 32000}\n");
  const CliResult r = run_bounded(dir, quiet({"monitor", "--listen", "127.0.0.1:0", "--push-listen", "127.0.0.1:0",
                                        "--gpu", "h200-sxm", "--model", model}));
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(r.err_lines.size(), 2u);  // the NVML warning, then the error
  EXPECT_EQ(r.err_lines[1].rfind("stepscope: error: monitor: --model: ", 0), 0u) << r.err_lines[1];
  EXPECT_NE(r.err_lines[1].find(model), std::string::npos) << r.err_lines[1];
}

// The CLI under `ulimit -n 64` with 80 push connections: the push server
// refuses what it cannot hold (counted), uses no CPU to speak of, and
// /metrics still answers at once.
TEST(MonitorCliAbuse, OutOfDescriptorsRefusesWithoutSpinning) {
  testing::TempDir dir;
  const std::string err_path = dir.file("monitor.err");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rlimit r{64, 64};
    ::setrlimit(RLIMIT_NOFILE, &r);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(err, 2);
    ::close(err);
    const std::string cli = testing::cli_path();
    ::execl(cli.c_str(), "stepscope", "monitor", "--listen", "127.0.0.1:0", "--push-listen", "127.0.0.1:0",
            "--nvml-lib", "/nonexistent", "--interval", "0.1", "--duration", "30", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  auto finish = [&] {
    ::kill(pid, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(pid, nullptr, WNOHANG) == pid) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  };
  int metrics_port = 0, push_port = 0;
  const std::regex ports("/metrics on port (\\d+), training pushes on port (\\d+)");
  for (int i = 0; i < 200 && !push_port; ++i) {
    std::smatch m;
    const std::string text = testing::read_file(err_path);
    if (std::regex_search(text, m, ports)) {
      metrics_port = std::stoi(m[1]);
      push_port = std::stoi(m[2]);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!push_port) finish();
  ASSERT_NE(push_port, 0) << testing::read_file(err_path);
  std::vector<int> clients;
  for (int k = 0; k < 80; ++k) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(push_port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);  // never waits: a full backlog must not hang the test
    clients.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto cpu_seconds = [&] {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), {});
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::string skip;
    long utime = 0, stime = 0;
    for (int f = 3; f <= 13; ++f) fields >> skip;
    fields >> utime >> stime;
    return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  };
  const double cpu0 = cpu_seconds();
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const double cpu = cpu_seconds() - cpu0;
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("monitor CPU while saturated: %.2f s in %.2f s of wall time (%.0f%%)\n", cpu, wall, 100 * cpu / wall);
  double worst = 0;
  std::string text;
  for (int i = 0; i < 5; ++i) {
    const auto s0 = Clock::now();
    auto r = http_get("127.0.0.1", metrics_port, "/metrics", 3000);
    worst = std::max(worst, std::chrono::duration<double>(Clock::now() - s0).count());
    if (!r) {
      worst = 99;
      break;
    }
    text = r->body;
  }
  std::printf("worst of 5 scrapes while saturated: %.4f s\n", worst);
  for (int fd : clients) ::close(fd);
  finish();
  EXPECT_LT(cpu, 0.25 * wall);  // the old loop spun at ~95% of a core
  EXPECT_LT(worst, 1.0);
  const std::regex refused("stepscope_monitor_push_rejected_total\\{[^}]*reason=\"no_descriptors\"\\} ([0-9]+)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, refused)) << text;
  EXPECT_GT(std::stoi(m[1]), 0);
}

}  // namespace
}  // namespace stepscope::monitor
