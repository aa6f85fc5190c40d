#include "monitor/push_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "monitor/push_client.h"
#include "monitor/loopback_sockets.h"

namespace stepscope::monitor {
namespace {

using test::raw_connect;

// Waits (bounded: 20 s, for loaded sanitizer runs) until `done` holds for the
// state's snapshot.
template <typename Pred>
TrainingSnapshot wait_for(const TrainingState& s, Pred done) {
  for (int i = 0; i < 4000; ++i) {
    TrainingSnapshot t = s.snapshot();
    if (done(t)) return t;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return s.snapshot();
}

struct Server {
  TrainingState state;
  PushServer server{state};
  Server() {
    std::string error;
    EXPECT_TRUE(server.start({"127.0.0.1", 0}, error)) << error;
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(server.port()); }
};

TEST(PushServer, AppliesUpdatesFromTheClient) {
  Server s;
  PushClient c;
  std::string error;
  ASSERT_TRUE(c.connect(s.address(), error)) << error;
  for (int step = 1; step <= 5; ++step) {
    TrainingUpdate u;
    u.step = step;
    u.loss = 3.0 - step * 0.1;
    u.step_time = 0.5;
    u.tokens = 1000;
    ASSERT_TRUE(c.push(u));
  }
  TrainingSnapshot t = wait_for(s.state, [](const TrainingSnapshot& t) { return t.steps_total >= 5; });
  EXPECT_EQ(t.steps_total, 5);
  EXPECT_EQ(t.tokens_total, 5000);
  EXPECT_EQ(*t.last.step, 5);
  EXPECT_DOUBLE_EQ(*t.last.loss, 2.5);
  EXPECT_DOUBLE_EQ(*t.tokens_per_second, 2000);
  EXPECT_EQ(t.connections_total, 1);
}

TEST(PushServer, MalformedLinesAreRejectedWithAReasonAndCounted) {
  Server s;
  PushClient c;
  std::string error;
  ASSERT_TRUE(c.connect(s.address(), error));
  auto replies = c.send_lines_and_wait({"step=1 loss=2", "step=x", "lr=1", "loss=1 loss=2", "grad_norm=nan", std::string(5000, 'a'), "step=2"}, 5000);
  ASSERT_EQ(replies.size(), 7u);
  EXPECT_EQ(replies[0], "ok");
  EXPECT_EQ(replies[1].rfind("error not_a_number: step", 0), 0u) << replies[1];
  EXPECT_EQ(replies[2].rfind("error unknown_key:", 0), 0u) << replies[2];
  EXPECT_EQ(replies[3].rfind("error duplicate_key:", 0), 0u) << replies[3];
  EXPECT_EQ(replies[4].rfind("error out_of_range: grad_norm", 0), 0u) << replies[4];
  EXPECT_EQ(replies[5].rfind("error too_long:", 0), 0u) << replies[5];
  EXPECT_EQ(replies[6], "ok");
  TrainingSnapshot t = s.state.snapshot();
  EXPECT_EQ(t.updates_total, 2);
  EXPECT_EQ(t.rejected["not_a_number"], 1);
  EXPECT_EQ(t.rejected["unknown_key"], 1);
  EXPECT_EQ(t.rejected["duplicate_key"], 1);
  EXPECT_EQ(t.rejected["out_of_range"], 1);
  EXPECT_EQ(t.rejected["too_long"], 1);
  EXPECT_EQ(*t.last.step, 2);  // the line after the long one was read whole
}

TEST(PushServer, AKilledClientLosesNoCompleteLine) {
  Server s;
  int fd = raw_connect(s.server.port());
  std::string lines;
  for (int step = 1; step <= 100; ++step) lines += "step=" + std::to_string(step) + " loss=1.5 tokens=10\n";
  lines += "step=101 loss=1.";  // the client dies mid-line
  ASSERT_EQ(::send(fd, lines.data(), lines.size(), 0), static_cast<ssize_t>(lines.size()));
  ::close(fd);
  TrainingSnapshot t = wait_for(s.state, [](const TrainingSnapshot& t) { return t.rejected.count("incomplete") > 0; });
  EXPECT_EQ(t.steps_total, 100);
  EXPECT_EQ(t.tokens_total, 1000);
  EXPECT_EQ(*t.last.step, 100);
  EXPECT_EQ(t.rejected["incomplete"], 1);
}

TEST(PushServer, ManyClientsAtOnce) {
  Server s;
  std::vector<std::thread> threads;
  for (int k = 0; k < 8; ++k)
    threads.emplace_back([&] {
      PushClient c;
      std::string error;
      ASSERT_TRUE(c.connect(s.address(), error));
      for (int i = 0; i < 250; ++i) {
        TrainingUpdate u;
        u.tokens = 1;
        c.push(u);
      }
      // Waiting for the replies proves every line was read before we close.
      auto replies = c.send_lines_and_wait({"tokens=1"}, 5000);
      EXPECT_FALSE(replies.empty());
    });
  for (auto& t : threads) t.join();
  TrainingSnapshot t = wait_for(s.state, [](const TrainingSnapshot& t) { return t.tokens_total >= 8 * 251; });
  EXPECT_EQ(t.tokens_total, 8 * 251);
}

TEST(PushServer, PortInUseIsAnError) {
  Server first;
  TrainingState state;
  PushServer second(state);
  std::string error;
  EXPECT_FALSE(second.start({"127.0.0.1", first.server.port()}, error));
  EXPECT_NE(error.find("cannot listen"), std::string::npos) << error;
}

}  // namespace
}  // namespace stepscope::monitor
