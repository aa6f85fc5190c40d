#include "monitor/host_port.h"

#include <arpa/inet.h>
#include <fmt/core.h>

#include <algorithm>

namespace stepscope::monitor {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A host name or dotted IPv4 address: letters, digits, '-', '.', '_' only.
bool is_host_name(const std::string& h) {
  return !h.empty() && h.size() <= 253 && std::all_of(h.begin(), h.end(), [](char c) {
           return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '.' || c == '_';
         });
}

}  // namespace

std::optional<HostPort> parse_host_port(const std::string& text, std::string& error) {
  auto fail = [&](const std::string& why) {
    error = fmt::format("\"{}\": {}", text.substr(0, 200), why);
    return std::nullopt;
  };
  if (text.find(',') != std::string::npos) return fail("one HOST:PORT only, not a list");
  HostPort hp;
  std::string port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string::npos) return fail("'[' without ']' (IPv6 is written [ADDRESS]:PORT)");
    hp.host = text.substr(1, close - 1);
    hp.ipv6 = true;
    in6_addr a6{};
    if (hp.host.empty()) return fail("empty host");
    if (::inet_pton(AF_INET6, hp.host.c_str(), &a6) != 1) return fail(fmt::format("\"{}\" is not an IPv6 address", hp.host));
    if (close + 1 >= text.size() || text[close + 1] != ':') return fail("expected :PORT after ']'");
    port_text = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos) return fail("expected HOST:PORT");
    hp.host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (hp.host.empty()) return fail("empty host");
    if (hp.host.find(':') != std::string::npos) return fail("an IPv6 address goes in brackets: [ADDRESS]:PORT");
    if (!is_host_name(hp.host)) return fail(fmt::format("\"{}\" is not a host name or IPv4 address", hp.host));
  }
  if (port_text.empty() || port_text.size() > 5 || !std::all_of(port_text.begin(), port_text.end(), is_digit))
    return fail("the port must be a number 0-65535");
  hp.port = std::stoi(port_text);
  if (hp.port > 65535) return fail("the port must be a number 0-65535");
  return hp;
}

std::string to_string(const HostPort& hp) {
  return hp.ipv6 ? fmt::format("[{}]:{}", hp.host, hp.port) : fmt::format("{}:{}", hp.host, hp.port);
}

}  // namespace stepscope::monitor
