// A full push table does not lock training clients out: a newcomer takes the
// place of the connection longest without a complete line (counted as
// `evicted`), unless every connection sent a line within the grace period.
// Loopback only; every wait is bounded.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "monitor/push_client.h"
#include "monitor/push_server.h"
#include "monitor/loopback_sockets.h"

namespace stepscope::monitor {
namespace {

using test::Clock;
using test::exchange;
using test::quiet_and_open;
using test::raw_connect;
using test::read_until_closed;
using test::wait_until;

constexpr const char* kEvicted = "error evicted: no complete line for ";

struct Server {
  TrainingState state;
  PushServer server;
  explicit Server(PushLimits limits = {}) : server(state, limits) {
    std::string error;
    EXPECT_TRUE(server.start({"127.0.0.1", 0}, error)) << error;
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(server.port()); }
  double rejected(const char* reason) const { return state.snapshot().rejected[reason]; }
  double connections() const { return state.snapshot().connections_total; }
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The lock-out of issue #25: with the default limits (256 clients, 60 s idle
// timeout) 256 silent connections used to refuse every training client for a
// minute. Now the oldest is evicted and the training line is taken at once.
TEST(PushServerEviction, TwoHundredFiftySixIdleConnectionsMakeRoomForATrainingClientWithinOneSecond) {
  Server s;
  std::vector<int> idle;
  for (int k = 0; k < 256; ++k) {
    idle.push_back(raw_connect(s.server.port()));
    // In batches, so the listen backlog (64) never overflows into SYN retries.
    if (k % 32 == 31) {
      ASSERT_TRUE(wait_until([&] { return s.connections() == k + 1; }));
    }
  }
  const auto all_connected = Clock::now();
  // Past the 1 s grace period: the idle connections may now be evicted.
  std::this_thread::sleep_until(all_connected + std::chrono::milliseconds(1100));

  const auto t0 = Clock::now();
  PushClient training;
  std::string error;
  ASSERT_TRUE(training.connect(s.address(), error)) << error;
  EXPECT_EQ(training.send_lines_and_wait({"step=1 loss=2.5"}, 5000), std::vector<std::string>{"ok"});
  const double took = seconds_since(t0);
  EXPECT_LT(took, 1.0);
  std::printf("training line accepted %.1f ms after connecting to a full table\n", took * 1000);
  EXPECT_EQ(s.state.snapshot().last.step.value_or(-1), 1);

  // The oldest idle connection made room and was told why; the others stay.
  const std::string told = read_until_closed(idle[0], 2000);
  EXPECT_EQ(told.rfind(kEvicted, 0), 0u) << told;
  EXPECT_NE(told.find("while 256 clients are connected; closing to make room\n"), std::string::npos) << told;
  for (size_t k = 1; k < idle.size(); ++k) EXPECT_TRUE(quiet_and_open(idle[k])) << k;
  EXPECT_EQ(s.rejected("evicted"), 1);
  EXPECT_EQ(s.rejected("too_many_clients"), 0);
  for (int fd : idle) ::close(fd);
}

// Partial-line bytes are not activity: the trickler connected first and has
// never ended a line, so it is the one evicted, although its last byte is
// more recent than the last line of the client that sends lines.
TEST(PushServerEviction, ATricklerIsEvictedBeforeAClientThatSendsLines) {
  PushLimits limits;
  limits.max_clients = 2;
  Server s(limits);
  const int trickler = raw_connect(s.server.port());
  ASSERT_TRUE(wait_until([&] { return s.connections() == 1; }));
  const int worker = raw_connect(s.server.port());
  ASSERT_EQ(exchange(worker, "step=1"), "ok");
  const auto t0 = Clock::now();
  while (seconds_since(t0) < 1.3) {  // one byte per 100 ms, no newline
    ASSERT_EQ(::send(trickler, "x", 1, MSG_NOSIGNAL), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const int newcomer = raw_connect(s.server.port());
  EXPECT_EQ(exchange(newcomer, "step=2", 1000), "ok");
  const std::string told = read_until_closed(trickler, 2000);
  EXPECT_EQ(told.rfind(kEvicted, 0), 0u) << told;
  EXPECT_EQ(exchange(worker, "step=3"), "ok");  // kept
  TrainingSnapshot t = s.state.snapshot();
  EXPECT_EQ(t.rejected["evicted"], 1);
  EXPECT_EQ(t.rejected["too_many_clients"], 0);
  EXPECT_EQ(t.rejected["incomplete"], 0);  // one count per connection: evicted
  EXPECT_EQ(t.steps_total, 3);
  for (int fd : {trickler, worker, newcomer}) ::close(fd);
}

// Within the grace period nobody is evicted: when every connection sent a
// line (or connected) less than 1 s ago, the newcomer is refused as before.
TEST(PushServerEviction, ANewcomerIsRefusedWhenEveryConnectionSentALineWithinTheGrace) {
  PushLimits limits;
  limits.max_clients = 2;
  limits.eviction_grace_seconds = 5;  // well past what the test takes on a busy machine
  Server s(limits);
  const int a = raw_connect(s.server.port());
  const int b = raw_connect(s.server.port());
  ASSERT_EQ(exchange(a, "step=1"), "ok");
  ASSERT_EQ(exchange(b, "step=2"), "ok");
  const int newcomer = raw_connect(s.server.port());
  EXPECT_EQ(read_until_closed(newcomer, 2000),
            "error too_many_clients: the monitor accepts 2 clients at once, and each sent a line in the last 5 s\n");
  EXPECT_EQ(exchange(a, "step=3"), "ok");
  EXPECT_EQ(exchange(b, "step=4"), "ok");
  EXPECT_EQ(s.rejected("evicted"), 0);
  EXPECT_EQ(s.rejected("too_many_clients"), 1);
  for (int fd : {a, b, newcomer}) ::close(fd);
}

// A training client that was evicted reads the close at its next push,
// connects again (evicting, in turn, the connection idle longest) and its
// line arrives.
TEST(PushServerEviction, AnEvictedPushClientReconnectsAndItsNextLineArrives) {
  PushLimits limits;
  limits.max_clients = 2;
  Server s(limits);
  PushClient training;
  std::string error;
  ASSERT_TRUE(training.connect(s.address(), error)) << error;
  TrainingUpdate u;
  u.step = 1;
  ASSERT_TRUE(training.push(u));
  ASSERT_TRUE(wait_until([&] { return s.state.snapshot().steps_total == 1; }));
  const int idle = raw_connect(s.server.port());
  ASSERT_TRUE(wait_until([&] { return s.connections() == 2; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const int newcomer = raw_connect(s.server.port());  // evicts the training client (its line is oldest)
  ASSERT_TRUE(wait_until([&] { return s.rejected("evicted") == 1; }));
  u.step = 2;
  ASSERT_TRUE(training.push(u));
  ASSERT_TRUE(wait_until([&] { return s.state.snapshot().steps_total == 2; }));
  EXPECT_EQ(s.state.snapshot().last.step.value_or(-1), 2);
  EXPECT_EQ(read_until_closed(idle, 2000).rfind(kEvicted, 0), 0u);  // made room for the reconnect
  EXPECT_TRUE(quiet_and_open(newcomer));                           // within its grace period
  EXPECT_EQ(s.rejected("evicted"), 2);
  EXPECT_EQ(s.connections(), 4);
  ::close(idle);
  ::close(newcomer);
}

}  // namespace
}  // namespace stepscope::monitor
