// "HOST:PORT" as the monitor's flags take it (IPv4 or a name; port 0 lets
// the kernel choose).
#pragma once

#include <optional>
#include <string>

namespace stepscope::monitor {

struct HostPort {
  std::string host;
  int port = 0;
};

std::optional<HostPort> parse_host_port(const std::string& text, std::string& error);

}  // namespace stepscope::monitor
