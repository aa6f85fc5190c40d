#include "monitor/push_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "monitor/push_protocol.h"

namespace stepscope::monitor {
namespace {

constexpr size_t kMaxClients = 256;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Replies never block the server: a client that does not read its replies
// simply misses them once its receive buffer is full.
void reply(int fd, const std::string& text) { ::send(fd, text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL); }

struct Client {
  int fd = -1;
  std::string buffer;
  bool discarding = false;  // inside an over-long line: drop bytes until its '\n'
};

}  // namespace

bool PushServer::start(const HostPort& where, std::string& error) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  std::string port = std::to_string(where.port);
  if (int rc = getaddrinfo(where.host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    error = fmt::format("{}:{}: {}", where.host, where.port, gai_strerror(rc));
    return false;
  }
  listen_fd_ = ::socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  bool bound = listen_fd_ >= 0 && ::bind(listen_fd_, res->ai_addr, res->ai_addrlen) == 0 && ::listen(listen_fd_, 64) == 0;
  freeaddrinfo(res);
  if (!bound) {
    error = fmt::format("{}:{}: cannot listen ({})", where.host, where.port, std::strerror(errno));
    if (listen_fd_ >= 0) ::close(listen_fd_);
    listen_fd_ = -1;
    return false;
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                           : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
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
  char chunk[4096];
  auto handle_line = [&](Client& c, std::string_view line) {
    PushParse p = parse_push_line(line);
    if (p.ok) {
      state_.apply(p.update, now_seconds());
      reply(c.fd, "ok\n");
    } else {
      state_.reject(p.reason);
      reply(c.fd, fmt::format("error {}: {}\n", p.reason, p.detail));
    }
  };
  for (;;) {
    std::vector<pollfd> fds;
    fds.push_back({wake_fd_[0], POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const Client& c : clients) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents) break;
    if (fds[1].revents & POLLIN) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        if (clients.size() >= kMaxClients) {
          state_.reject("too_many_clients");
          reply(fd, "error too_many_clients: the monitor accepts 256 clients at once\n");
          ::close(fd);
        } else {
          state_.connection();
          clients.push_back({fd, {}, false});
        }
      }
    }
    for (size_t k = 2; k < fds.size(); ++k) {
      if (!fds[k].revents) continue;
      Client& c = clients[k - 2];
      ssize_t n = ::recv(c.fd, chunk, sizeof chunk, 0);
      if (n <= 0) {
        // The peer closed (or died): complete lines were applied already;
        // an unfinished one is rejected so the loss is visible.
        if (!c.buffer.empty() && !c.discarding) state_.reject("incomplete");
        ::close(c.fd);
        c.fd = -1;
        continue;
      }
      c.buffer.append(chunk, static_cast<size_t>(n));
      size_t start = 0;
      for (size_t nl; (nl = c.buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::string_view line(c.buffer.data() + start, nl - start);
        if (c.discarding)
          c.discarding = false;  // the end of a line already rejected as too long
        else
          handle_line(c, line);
      }
      c.buffer.erase(0, start);
      if (!c.discarding && c.buffer.size() > kMaxPushLineBytes + 1) {
        handle_line(c, c.buffer);  // rejected as too_long
        c.buffer.clear();
        c.discarding = true;
      } else if (c.discarding) {
        c.buffer.clear();
      }
    }
    std::erase_if(clients, [](const Client& c) { return c.fd < 0; });
  }
  for (Client& c : clients) ::close(c.fd);
}

}  // namespace stepscope::monitor
