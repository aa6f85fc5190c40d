#include "monitor/push_client.h"

#include <fmt/core.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "monitor/host_port.h"

namespace stepscope::monitor {

bool PushClient::connect(const std::string& host_port, std::string& error) {
  close();
  address_ = host_port;
  auto hp = parse_host_port(host_port, error);
  if (!hp) return false;
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  std::string port = std::to_string(hp->port);
  if (int rc = getaddrinfo(hp->host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    error = fmt::format("{}: {}", host_port, gai_strerror(rc));
    return false;
  }
  for (addrinfo* a = res; a; a = a->ai_next) {
    fd_ = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0);
    if (fd_ >= 0 && ::connect(fd_, a->ai_addr, a->ai_addrlen) == 0) break;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  freeaddrinfo(res);
  if (fd_ < 0) {
    error = fmt::format("{}: cannot connect ({})", host_port, std::strerror(errno));
    return false;
  }
  return true;
}

bool PushClient::send_all(const std::string& text) {
  size_t sent = 0;
  while (fd_ >= 0 && sent < text.size()) {
    ssize_t n = ::send(fd_, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close();
      return false;
    }
    sent += static_cast<size_t>(n);
  }
  return fd_ >= 0;
}

bool PushClient::push(const TrainingUpdate& u) {
  if (fd_ < 0) return false;
  // Drop replies already waiting so the receive buffer never fills. An end
  // of stream or a reset means the monitor closed the connection (idle
  // timeout, eviction, a restart): connect again once, so the line is not
  // sent into a dead socket.
  char sink[512];
  ssize_t n;
  while ((n = ::recv(fd_, sink, sizeof sink, MSG_DONTWAIT)) > 0 || (n < 0 && errno == EINTR)) {
  }
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
    std::string error;
    if (!connect(address_, error)) return false;
  }
  return send_all(format_push_line(u));
}

std::vector<std::string> PushClient::send_lines_and_wait(const std::vector<std::string>& lines, int timeout_ms) {
  std::vector<std::string> replies;
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  if (!send_all(text)) return replies;
  ::shutdown(fd_, SHUT_WR);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string buffer;
  char chunk[1024];
  while (replies.size() < lines.size()) {
    int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    pollfd p{fd_, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, left) <= 0) break;
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) break;
    buffer.append(chunk, static_cast<size_t>(n));
    for (size_t nl; (nl = buffer.find('\n')) != std::string::npos; buffer.erase(0, nl + 1))
      replies.push_back(buffer.substr(0, nl));
  }
  close();
  return replies;
}

void PushClient::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace stepscope::monitor
