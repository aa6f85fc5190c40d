// One listening or connecting address as the monitor's flags take it:
// `HOST:PORT` (an IPv4 address or a host name) or `[IPV6]:PORT`; port 0 lets
// the kernel choose. Parsed here, never handed to a library unchecked: one
// endpoint only (no lists), no empty host, no stray characters, a port of
// plain digits 0-65535.
#pragma once

#include <optional>
#include <string>

namespace stepscope::monitor {

struct HostPort {
  std::string host;   // without brackets for IPv6
  int port = 0;
  bool ipv6 = false;  // written in brackets
};

// The address, or nullopt with `error` saying what is wrong (the text quoted).
std::optional<HostPort> parse_host_port(const std::string& text, std::string& error);
// Back to text: "127.0.0.1:9401", "[::1]:9401".
std::string to_string(const HostPort& hp);

}  // namespace stepscope::monitor
