// Listening TCP sockets for the monitor's two servers, and an accept() that
// survives running out of file descriptors.
#pragma once

#include <string>

#include "monitor/host_port.h"

namespace stepscope::monitor {

// A listening socket on `where` (SO_REUSEADDR, close-on-exec), or -1 with
// `error` in one line naming the address and the reason, e.g.
// "127.0.0.1:9401: cannot listen (Address already in use)".
int open_listener(const HostPort& where, int backlog, std::string& error);
// The port a socket is bound to (the kernel's choice for port 0).
int bound_port(int fd);

// accept() that never leaves the listener readable for ever. When the
// process is out of descriptors (EMFILE/ENFILE) it closes a spare it keeps,
// accepts the waiting connection, closes it at once and reopens the spare:
// the client sees its connection closed instead of waiting in the backlog,
// and the caller's poll loop does not spin on a listener it cannot empty.
class Acceptor {
 public:
  enum class Result { accepted, nothing, refused_no_descriptors, failed };
  Acceptor();
  ~Acceptor();
  Acceptor(const Acceptor&) = delete;
  Acceptor& operator=(const Acceptor&) = delete;
  // `fd` is set when accepted. `failed` (no spare to give up either): the
  // caller stops polling the listener for a moment.
  Result accept(int listen_fd, int& fd);

 private:
  int spare_ = -1;
};

}  // namespace stepscope::monitor
