// /metrics under abuse: idle and slow HTTP clients must not delay a scrape,
// and an unusable address is a one-line error. Loopback only, bounded waits.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "monitor/exporter.h"
#include "monitor/http_get.h"
#include "monitor/listen_socket.h"
#include "monitor/loopback_sockets.h"

namespace stepscope::monitor {
namespace {

using test::Clock;
using test::raw_connect;

struct Latency {
  int failed = 0;
  double median = 0, max = 0;
};

// `n` scrapes, `gap_ms` apart; a scrape that takes 3 s counts as failed (the
// old server made them wait ~30 s) and stops the series.
Latency scrape_latency(int port, int n, int gap_ms) {
  std::vector<double> took;
  Latency l;
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    auto r = http_get("127.0.0.1", port, "/metrics", 3000);
    took.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    if (!r || r->status != 200 || r->body.find("stepscope_monitor_samples_total") == std::string::npos) {
      ++l.failed;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
  }
  std::sort(took.begin(), took.end());
  l.median = took[took.size() / 2];
  l.max = took.back();
  return l;
}

TEST(ExporterAbuse, SixtyFourIdleConnectionsDoNotDelayAScrape) {
  Exporter e("h", "j");
  std::string error;
  ASSERT_TRUE(e.listen({"127.0.0.1", 0}, error)) << error;
  std::vector<int> idle;
  for (int k = 0; k < 64; ++k) idle.push_back(raw_connect(e.port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the server has taken them all
  const Latency l = scrape_latency(e.port(), 7, 50);
  std::printf("scrape latency with 64 idle connections: median %.4f s, max %.4f s\n", l.median, l.max);
  EXPECT_EQ(l.failed, 0);
  EXPECT_LT(l.max, 1.0);
  for (int fd : idle) ::close(fd);
}

TEST(ExporterAbuse, SlowClientsDoNotDelayAScrapeAndAreCutOff) {
  Exporter e("h", "j");
  std::string error;
  ASSERT_TRUE(e.listen({"127.0.0.1", 0}, error)) << error;
  std::vector<int> slow;
  for (int k = 0; k < 8; ++k) slow.push_back(raw_connect(e.port()));
  // Each sends its request a byte a second, never finishing in time.
  std::atomic<bool> stop{false};
  std::thread dribble([&] {
    const std::string request = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    for (size_t i = 0; i < request.size() && !stop; ++i) {
      for (int fd : slow) ::send(fd, &request[i], 1, MSG_NOSIGNAL);
      for (int w = 0; w < 10 && !stop; ++w) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  const auto t0 = Clock::now();
  const Latency l = scrape_latency(e.port(), 7, 200);
  std::printf("scrape latency with 8 slow clients (1 byte/s): median %.4f s, max %.4f s\n", l.median, l.max);
  EXPECT_EQ(l.failed, 0);
  EXPECT_LT(l.max, 1.0);
  // The server drops each slow client once its request timeout (2 s) is over.
  int closed = 0;
  for (int fd : slow) {
    pollfd p{fd, POLLIN, 0};
    const int left = 5000 - static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count());
    if (::poll(&p, 1, std::max(left, 0)) == 1) {
      char buf[512];
      while (::recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0) {
      }
      ++closed;
    }
  }
  std::printf("slow clients cut off within %.2f s: %d of 8\n",
              std::chrono::duration<double>(Clock::now() - t0).count(), closed);
  EXPECT_EQ(closed, 8);
  stop = true;
  dribble.join();
  for (int fd : slow) ::close(fd);
}

TEST(ExporterAbuse, PortInUseIsOneLineNamingTheAddressAndTheReason) {
  std::string error;
  const int taken = open_listener({"127.0.0.1", 0}, 1, error);
  ASSERT_GE(taken, 0) << error;
  const int port = bound_port(taken);
  Exporter e("h", "j");
  EXPECT_FALSE(e.listen({"127.0.0.1", port}, error));
  EXPECT_NE(error.find("127.0.0.1:" + std::to_string(port) + ": cannot listen (Address already in use)"),
            std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
  ::close(taken);
}

TEST(ExporterAbuse, Ipv6ServesOrSaysWhyNot) {
  Exporter e("h", "j");
  std::string error;
  if (e.listen({"::1", 0, true}, error)) {
    auto r = http_get("::1", e.port(), "/metrics", 5000);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 200);
  } else {
    // Debian 12's civetweb is built without IPv6: the refusal says so.
    EXPECT_NE(error.find("[::1]:0: cannot serve /metrics (the civetweb library in use was built without IPv6"),
              std::string::npos) << error;
  }
}

}  // namespace
}  // namespace stepscope::monitor
