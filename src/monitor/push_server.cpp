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
  // When the last line was answered (or the connection accepted): what the
  // idle timeout and eviction measure. Bytes of an unfinished line leave it.
  Clock::time_point last_line;
  double tokens = 0;  // the line bucket
  Clock::time_point refilled;
};

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// The connection longest without a line, or clients.end() when there is none.
std::vector<Client>::iterator longest_idle(std::vector<Client>& clients) {
  return std::min_element(clients.begin(), clients.end(),
                          [](const Client& a, const Client& b) { return a.last_line < b.last_line; });
}

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
  const Clock::duration idle = seconds(limits_.idle_timeout_seconds);
  const Clock::duration grace = seconds(limits_.eviction_grace_seconds);

  auto handle_line = [&](Client& c, std::string_view line, bool too_long) {
    // Any line answered is activity, whatever the answer: the client is alive.
    const Clock::time_point now = Clock::now();
    c.last_line = now;
    // The bucket: refilled at lines_per_second up to burst_lines, one token a line.
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
  // Counted once the connection is closed, so whoever sees the count also
  // sees the close.
  auto refuse = [&](int fd, const char* reason, const std::string& why) {
    reply(fd, fmt::format("error {}: {}\n", reason, why));
    ::close(fd);
    state_.reject(reason);
  };
  // A new connection: refused near the descriptor limit; when the table is
  // full, it takes the place of the connection longest without a line if
  // that one is past the grace period, else it is refused.
  auto admit = [&](int fd) {
    const Clock::time_point now = Clock::now();
    if (fd >= fd_limit - limits_.descriptor_reserve) {
      refuse(fd, "no_descriptors", fmt::format("the monitor keeps its last {} file descriptors (of {}) for /metrics",
                                               limits_.descriptor_reserve, fd_limit));
      return;
    }
    if (clients.size() >= limits_.max_clients) {
      auto victim = longest_idle(clients);
      if (victim == clients.end() || now - victim->last_line < grace) {
        refuse(fd, "too_many_clients",
               fmt::format("the monitor accepts {} clients at once, and each sent a line in the last {:g} s",
                           limits_.max_clients, limits_.eviction_grace_seconds));
        return;
      }
      refuse(victim->fd, "evicted",
             fmt::format("no complete line for {:.1f} s while {} clients are connected; closing to make room",
                         std::chrono::duration<double>(now - victim->last_line).count(), limits_.max_clients));
      clients.erase(victim);
    }
    state_.connection();
    Client c;
    c.fd = fd;
    c.last_line = c.refilled = now;
    c.tokens = limits_.burst_lines;
    clients.push_back(std::move(c));
  };

  for (;;) {
    const Clock::time_point now = Clock::now();
    // Close connections without a line for too long; the next deadline bounds the wait.
    Clock::time_point next = Clock::time_point::max();
    for (Client& c : clients) {
      if (now - c.last_line >= idle) {
        state_.reject("idle_timeout");
        reply(c.fd, fmt::format("error idle_timeout: no complete line for {:g} s; closing\n",
                                limits_.idle_timeout_seconds));
        ::close(c.fd);
        c.fd = -1;
      } else {
        next = std::min(next, c.last_line + idle);
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
    // Reads first: a line that arrived with the newcomer still counts for
    // its connection before a victim is chosen, and what the victim sent has
    // been read (up to 4 KiB a wake-up) when it is closed, so it gets a FIN,
    // not a reset, and can read why. (PushClient reconnects after either.)
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
      c.framer.feed(std::string_view(chunk, static_cast<size_t>(n)),
                    [&](std::string_view line, bool too_long) { handle_line(c, line, too_long); });
    }
    std::erase_if(clients, [](const Client& c) { return c.fd < 0; });
    // Several connections per wake-up (the listener is non-blocking), so a
    // burst of clients does not overflow the backlog; bounded so reads are
    // not starved.
    for (int accepted = 0; (fds[1].revents & POLLIN) && accepted < 64; ++accepted) {
      int fd = -1;
      const Acceptor::Result r = acceptor.accept(listen_fd_, fd);
      if (r == Acceptor::Result::accepted) {
        admit(fd);
        continue;
      }
      if (r == Acceptor::Result::refused_no_descriptors) {
        state_.reject("no_descriptors");
        continue;
      }
      if (r == Acceptor::Result::failed) {
        // Nothing could be accepted, not even to close it: stop polling the
        // listener for a moment instead of spinning on it.
        state_.reject("no_descriptors");
        listener_paused_until = Clock::now() + std::chrono::milliseconds(100);
      }
      break;  // nothing (left) to accept
    }
  }
  for (Client& c : clients) ::close(c.fd);
}

}  // namespace stepscope::monitor
