#include "monitor/listen_socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace stepscope::monitor {

int open_listener(const HostPort& where, int backlog, std::string& error) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = where.ipv6 ? AF_INET6 : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  const std::string port = std::to_string(where.port);
  if (int rc = getaddrinfo(where.host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    error = fmt::format("{}: cannot listen ({})", to_string(where), gai_strerror(rc));
    return -1;
  }
  int fd = ::socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int saved = errno;
  if (fd >= 0) {
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, res->ai_addr, res->ai_addrlen) != 0 || ::listen(fd, backlog) != 0) {
      saved = errno;
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd < 0) error = fmt::format("{}: cannot listen ({})", to_string(where), std::strerror(saved));
  return fd;
}

int bound_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  return ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                          : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

Acceptor::Acceptor() : spare_(::open("/dev/null", O_RDONLY | O_CLOEXEC)) {}

Acceptor::~Acceptor() {
  if (spare_ >= 0) ::close(spare_);
}

Acceptor::Result Acceptor::accept(int listen_fd, int& fd) {
  fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0) return Result::accepted;
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED) return Result::nothing;
  if ((errno != EMFILE && errno != ENFILE) || spare_ < 0) return Result::failed;
  ::close(spare_);
  int victim = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  // Linux reports EMFILE before it looks at the queue: with a descriptor
  // free, an empty queue answers EAGAIN.
  const bool empty = victim < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  if (victim >= 0) ::close(victim);
  spare_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  fd = -1;
  if (empty) return Result::nothing;
  return victim >= 0 ? Result::refused_no_descriptors : Result::failed;
}

}  // namespace stepscope::monitor
