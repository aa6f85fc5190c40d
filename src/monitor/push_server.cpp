#include "monitor/push_server.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include "monitor/listen_socket.h"
#include "monitor/push_line_framer.h"
#include "monitor/push_protocol.h"

namespace stepscope::monitor {
namespace {

using Clock = std::chrono::steady_clock;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Replies never block the server: a client that does not read its replies
// simply misses them once its receive buffer is full.
void reply(int fd, const std::string& text) { ::send(fd, text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL); }

struct Client {
  int fd = -1;
  PushLineFramer framer;
  Clock::time_point last_byte;
  double tokens = 0;  // the line bucket
  Clock::time_point refilled;
};

// Descriptors this process may open (the soft RLIMIT_NOFILE).
long descriptor_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 1L << 20;
  return static_cast<long>(r.rlim_cur);
}

}  // namespace

PushServer::PushServer(TrainingState& state, PushLimits limits) : state_(state), limits_(limits) {
  if (limits_.burst_lines <= 0) limits_.burst_lines = std::max(1000.0, 5 * limits_.lines_per_second);
}

bool PushServer::start(const HostPort& where, std::string& error) {
  listen_fd_ = open_listener(where, 64, error);
  if (listen_fd_ < 0) return false;
  port_ = bound_port(listen_fd_);
  if (::pipe2(wake_fd_, O_CLOEXEC) != 0) {
    error = fmt::format("pipe: {}", std::strerror(errno));
    return false;
  }
  thread_ = std::thread([this] { run(); });
  return true;
}

void PushServer::stop() {
  if (thread_.joinable()) {
    char b = 'x';
    [[maybe_unused]] auto n = ::write(wake_fd_[1], &b, 1);
    thread_.join();
  }
  for (int* fd : {&listen_fd_, &wake_fd_[0], &wake_fd_[1]}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void PushServer::run() {
  std::vector<Client> clients;
  Acceptor acceptor;
  const long fd_limit = descriptor_limit();
  Clock::time_point listener_paused_until{};
  char chunk[4096];
  const auto idle = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits_.idle_timeout_seconds));

  auto handle_line = [&](Client& c, std::string_view line, bool too_long) {
    // The bucket: refilled at lines_per_second up to burst_lines, one token a line.
    const Clock::time_point now = Clock::now();
    c.tokens = std::min(limits_.burst_lines,
                        c.tokens + std::chrono::duration<double>(now - c.refilled).count() * limits_.lines_per_second);
    c.refilled = now;
    if (c.tokens < 1) {
      state_.reject("rate_limited");
      reply(c.fd, fmt::format("error rate_limited: more than {:g} lines/s (burst {:g}); line dropped\n",
                              limits_.lines_per_second, limits_.burst_lines));
      return;
    }
    c.tokens -= 1;
    if (too_long) {
      state_.reject("too_long");
      reply(c.fd, fmt::format("error too_long: line longer than {} bytes\n", kMaxPushLineBytes));
      return;
    }
    PushParse p = parse_push_line(line);
    if (p.ok) {
      state_.apply(p.update, now_seconds());
      reply(c.fd, "ok\n");
    } else {
      state_.reject(p.reason);
      reply(c.fd, fmt::format("error {}: {}\n", p.reason, p.detail));
    }
  };
  auto refuse = [&](int fd, const char* reason, const std::string& why) {
    state_.reject(reason);
    reply(fd, fmt::format("error {}: {}\n", reason, why));
    ::close(fd);
  };

  for (;;) {
    const Clock::time_point now = Clock::now();
    // Close connections silent for too long; the next deadline bounds the wait.
    Clock::time_point next = Clock::time_point::max();
    for (Client& c : clients) {
      if (now - c.last_byte >= idle) {
        state_.reject("idle_timeout");
        reply(c.fd, fmt::format("error idle_timeout: nothing received for {:g} s; closing\n", limits_.idle_timeout_seconds));
        ::close(c.fd);
        c.fd = -1;
      } else {
        next = std::min(next, c.last_byte + idle);
      }
    }
    std::erase_if(clients, [](const Client& c) { return c.fd < 0; });
    const bool listening = now >= listener_paused_until;
    if (!listening) next = std::min(next, listener_paused_until);
    int timeout_ms = -1;
    if (next != Clock::time_point::max())
      timeout_ms = static_cast<int>(std::clamp<int64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1, 0, 60'000));

    std::vector<pollfd> fds;
    fds.push_back({wake_fd_[0], POLLIN, 0});
    fds.push_back({listening ? listen_fd_ : -1, POLLIN, 0});  // a negative fd is skipped by poll
    for (const Client& c : clients) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents) break;
    if (fds[1].revents & POLLIN) {
      int fd = -1;
      switch (acceptor.accept(listen_fd_, fd)) {
        case Acceptor::Result::accepted:
          if (clients.size() >= limits_.max_clients) {
            refuse(fd, "too_many_clients", fmt::format("the monitor accepts {} clients at once", limits_.max_clients));
          } else if (fd >= fd_limit - limits_.descriptor_reserve) {
            refuse(fd, "no_descriptors", fmt::format("the monitor keeps its last {} file descriptors (of {}) for /metrics",
                                                     limits_.descriptor_reserve, fd_limit));
          } else {
            state_.connection();
            Client c;
            c.fd = fd;
            c.last_byte = c.refilled = Clock::now();
            c.tokens = limits_.burst_lines;
            clients.push_back(std::move(c));
          }
          break;
        case Acceptor::Result::refused_no_descriptors:
          state_.reject("no_descriptors");
          break;
        case Acceptor::Result::failed:
          // Nothing could be accepted, not even to close it: stop polling the
          // listener for a moment instead of spinning on it.
          state_.reject("no_descriptors");
          listener_paused_until = Clock::now() + std::chrono::milliseconds(100);
          break;
        case Acceptor::Result::nothing:
          break;
      }
    }
    for (size_t k = 2; k < fds.size(); ++k) {
      if (!fds[k].revents) continue;
      Client& c = clients[k - 2];
      ssize_t n = ::recv(c.fd, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        // The peer closed (or died): complete lines were applied already;
        // an unfinished one is rejected so the loss is visible.
        if (c.framer.incomplete()) state_.reject("incomplete");
        ::close(c.fd);
        c.fd = -1;
        continue;
      }
      c.last_byte = Clock::now();
      c.framer.feed(std::string_view(chunk, static_cast<size_t>(n)),
                    [&](std::string_view line, bool too_long) { handle_line(c, line, too_long); });
    }
    std::erase_if(clients, [](const Client& c) { return c.fd < 0; });
  }
  for (Client& c : clients) ::close(c.fd);
}

}  // namespace stepscope::monitor
