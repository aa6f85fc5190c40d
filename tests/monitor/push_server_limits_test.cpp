// The push port under abuse: idle connections time out, floods are rate
// limited, running out of descriptors refuses instead of spinning. Loopback
// only; every wait is bounded.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "monitor/listen_socket.h"
#include "monitor/push_client.h"
#include "monitor/push_server.h"
#include "monitor/loopback_sockets.h"

namespace stepscope::monitor {
namespace {

using test::Clock;
using test::raw_connect;
using test::read_until_closed;

struct Server {
  TrainingState state;
  PushServer server;
  explicit Server(PushLimits limits) : server(state, limits) {
    std::string error;
    EXPECT_TRUE(server.start({"127.0.0.1", 0}, error)) << error;
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(server.port()); }
};

TEST(PushServerLimits, IdleConnectionsAreClosedSoTheyCannotLockClientsOut) {
  PushLimits limits;
  limits.idle_timeout_seconds = 1;
  limits.max_clients = 4;
  Server s(limits);
  std::vector<int> idle;
  for (int k = 0; k < 4; ++k) idle.push_back(raw_connect(s.server.port()));
  // The table is full: a fifth client is refused...
  int fifth = raw_connect(s.server.port());
  EXPECT_EQ(read_until_closed(fifth, 5000).rfind("error too_many_clients:", 0), 0u);
  ::close(fifth);
  // ...until the idle ones time out (about 1 s), each told why.
  const auto t0 = Clock::now();
  for (int fd : idle) {
    EXPECT_EQ(read_until_closed(fd, 5000), "error idle_timeout: no complete line for 1 s; closing\n");
    ::close(fd);
  }
  const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_GT(waited, 0.5);
  EXPECT_LT(waited, 3.0);
  PushClient c;
  std::string error;
  ASSERT_TRUE(c.connect(s.address(), error)) << error;
  EXPECT_EQ(c.send_lines_and_wait({"step=1"}, 5000), std::vector<std::string>{"ok"});
  TrainingSnapshot t = s.state.snapshot();
  EXPECT_EQ(t.rejected["idle_timeout"], 4);
  EXPECT_EQ(t.rejected["too_many_clients"], 1);
}

TEST(PushServerLimits, ClientsReconnectAfterTheMonitorClosedAnIdleConnection) {
  PushLimits limits;
  limits.idle_timeout_seconds = 1;
  Server s(limits);
  PushClient c;
  std::string error;
  ASSERT_TRUE(c.connect(s.address(), error)) << error;
  TrainingUpdate u;
  u.step = 1;
  ASSERT_TRUE(c.push(u));
  for (int i = 0; i < 400 && s.state.snapshot().rejected["idle_timeout"] < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(s.state.snapshot().rejected["idle_timeout"], 1);
  u.step = 2;
  ASSERT_TRUE(c.push(u));  // reconnects: the line is not sent into the closed socket
  for (int i = 0; i < 400 && s.state.snapshot().steps_total < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(s.state.snapshot().steps_total, 2);
  EXPECT_EQ(*s.state.snapshot().last.step, 2);
}

// Bytes of an unfinished line are not activity: a client that trickles one
// byte per 100 ms and never ends a line is closed by the idle timeout like a
// silent one (it used to be kept for ever), while a client that sends a line
// every 300 ms stays.
TEST(PushServerLimits, ATricklerWithoutALineIsClosedByTheIdleTimeout) {
  PushLimits limits;
  limits.idle_timeout_seconds = 1;
  Server s(limits);
  const int trickler = raw_connect(s.server.port());
  const int steady = raw_connect(s.server.port());
  const auto t0 = Clock::now();
  std::string closed_with;
  int step = 0;
  while (Clock::now() - t0 < std::chrono::seconds(3)) {
    ASSERT_EQ(::send(trickler, "x", 1, MSG_NOSIGNAL), 1);
    if (step % 3 == 0) ASSERT_EQ(test::exchange(steady, "step=" + std::to_string(step)), "ok");
    ++step;
    closed_with = read_until_closed(trickler, 100);
    if (closed_with != "<still open>") break;
  }
  const double after = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_EQ(closed_with, "error idle_timeout: no complete line for 1 s; closing\n");
  EXPECT_GT(after, 0.9);
  EXPECT_LT(after, 2.0);
  EXPECT_EQ(test::exchange(steady, "step=100"), "ok");  // the client with lines is kept
  EXPECT_EQ(s.state.snapshot().rejected["idle_timeout"], 1);
  ::close(trickler);
  ::close(steady);
}

TEST(PushServerLimits, LinesBeyondTheRateAreRejectedAndCounted) {
  PushLimits limits;
  limits.lines_per_second = 10;
  limits.burst_lines = 20;
  Server s(limits);
  PushClient c;
  std::string error;
  ASSERT_TRUE(c.connect(s.address(), error)) << error;
  std::vector<std::string> lines(100, "tokens=1");
  const auto t0 = Clock::now();
  auto replies = c.send_lines_and_wait(lines, 5000);
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  ASSERT_EQ(replies.size(), 100u);
  int ok = 0, limited = 0;
  for (const auto& r : replies) {
    if (r == "ok") ++ok;
    if (r.rfind("error rate_limited: more than 10 lines/s (burst 20)", 0) == 0) ++limited;
  }
  // The bucket's 20, plus 10/s for the time the lines took to arrive.
  EXPECT_GE(ok, 20);
  EXPECT_LE(ok, 20 + static_cast<int>(took * 10) + 1);
  EXPECT_EQ(ok + limited, 100);
  TrainingSnapshot t = s.state.snapshot();
  EXPECT_EQ(t.tokens_total, ok);
  EXPECT_EQ(t.rejected["rate_limited"], limited);
}

// In a child process whose descriptors are all taken: the acceptor gives up
// its spare to accept and close the waiting connection, so the listener is
// emptied (no busy loop) and the client sees its connection closed.
TEST(ListenSocket, AcceptorRefusesWhenOutOfDescriptors) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rlimit r{64, 64};
    if (::setrlimit(RLIMIT_NOFILE, &r) != 0) ::_exit(10);
    std::string error;
    int listener = open_listener({"127.0.0.1", 0}, 8, error);
    if (listener < 0) ::_exit(11);
    int client = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(bound_port(listener)));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(client, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) ::_exit(12);
    Acceptor acceptor;
    while (::open("/dev/null", O_RDONLY) >= 0) {
    }
    if (errno != EMFILE) ::_exit(13);
    int fd = -1;
    if (acceptor.accept(listener, fd) != Acceptor::Result::refused_no_descriptors) ::_exit(14);
    char b;
    if (::recv(client, &b, 1, 0) != 0) ::_exit(15);  // closed by the acceptor
    if (acceptor.accept(listener, fd) != Acceptor::Result::nothing) ::_exit(16);  // the listener is empty
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(PushServerLimits, Ipv6Loopback) {
  TrainingState state;
  PushServer server(state);
  std::string error;
  if (!server.start({"::1", 0, true}, error)) GTEST_SKIP() << "no IPv6 loopback here: " << error;
  PushClient c;
  ASSERT_TRUE(c.connect("[::1]:" + std::to_string(server.port()), error)) << error;
  EXPECT_EQ(c.send_lines_and_wait({"step=7"}, 5000), std::vector<std::string>{"ok"});
  EXPECT_EQ(*state.snapshot().last.step, 7);
}

}  // namespace
}  // namespace stepscope::monitor
