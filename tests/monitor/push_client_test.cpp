// PushClient against a peer that resets the connection (a close with unread
// data, or SO_LINGER 0): the client connects again at its next push instead
// of failing every push after it. Loopback only; every wait is bounded.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "monitor/listen_socket.h"
#include "monitor/push_client.h"

namespace stepscope::monitor {
namespace {

// Accepts one connection within 2 s (the listener is non-blocking).
int accept_one(int listener) {
  pollfd p{listener, POLLIN, 0};
  if (::poll(&p, 1, 2000) != 1) return -1;
  return ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
}

TEST(PushClientReconnect, AResetConnectionIsOpenedAgainAtTheNextPush) {
  std::string error;
  const int listener = open_listener({"127.0.0.1", 0}, 8, error);
  ASSERT_GE(listener, 0) << error;
  PushClient client;
  ASSERT_TRUE(client.connect("127.0.0.1:" + std::to_string(bound_port(listener)), error)) << error;
  const int first = accept_one(listener);
  ASSERT_GE(first, 0);
  linger reset{1, 0};
  ASSERT_EQ(::setsockopt(first, SOL_SOCKET, SO_LINGER, &reset, sizeof reset), 0);
  ::close(first);  // the client's next read sees ECONNRESET, not an end of stream
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the reset arrive

  TrainingUpdate u;
  u.step = 5;
  EXPECT_TRUE(client.push(u));
  const int second = accept_one(listener);
  ASSERT_GE(second, 0) << "the client did not connect again";
  std::string got;
  char buf[256];
  pollfd q{second, POLLIN, 0};
  while (got.find('\n') == std::string::npos && ::poll(&q, 1, 2000) == 1) {
    const ssize_t n = ::recv(second, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(got, "step=5\n");
  ::close(second);
  ::close(listener);
}

}  // namespace
}  // namespace stepscope::monitor
