// Raw loopback sockets for the monitor's server tests (push server and
// /metrics): what a misbehaving client does (connect and say nothing, trickle
// bytes, read until closed). Every wait is bounded.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace stepscope::monitor::test {

using Clock = std::chrono::steady_clock;

inline int raw_connect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  return fd;
}

inline int ms_left(Clock::time_point deadline) {
  return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
}

// Everything the server sends until it closes the connection, or that text
// plus "<still open>" after `limit_ms`.
inline std::string read_until_closed(int fd, int limit_ms) {
  std::string text;
  const auto deadline = Clock::now() + std::chrono::milliseconds(limit_ms);
  char buf[4096];
  for (;;) {
    const int left = ms_left(deadline);
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, left) <= 0) return text + "<still open>";
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return text;
    text.append(buf, static_cast<size_t>(n));
  }
}

// Sends `line` (with its '\n') and returns the server's one-line reply
// without '\n', or "<no reply>" / "<closed>" within `limit_ms`.
inline std::string exchange(int fd, const std::string& line, int limit_ms = 5000) {
  const std::string text = line + "\n";
  if (::send(fd, text.data(), text.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(text.size())) return "<send failed>";
  std::string reply;
  const auto deadline = Clock::now() + std::chrono::milliseconds(limit_ms);
  char c;
  for (;;) {
    const int left = ms_left(deadline);
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, left) <= 0) return "<no reply>";
    if (::recv(fd, &c, 1, 0) != 1) return "<closed>";
    if (c == '\n') return reply;
    reply += c;
  }
}

// True when the server has sent nothing and not closed `fd`.
inline bool quiet_and_open(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 0;
}

// Waits (at most `limit_ms`) until `done` holds; returns whether it did.
inline bool wait_until(const std::function<bool()>& done, int limit_ms = 5000) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(limit_ms);
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace stepscope::monitor::test
