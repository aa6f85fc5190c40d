#include "monitor/host_port.h"

#include <fmt/core.h>

#include <charconv>

namespace stepscope::monitor {

std::optional<HostPort> parse_host_port(const std::string& text, std::string& error) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    error = fmt::format("\"{}\" is not HOST:PORT", text);
    return std::nullopt;
  }
  HostPort hp;
  hp.host = text.substr(0, colon);
  const char* b = text.data() + colon + 1;
  const char* e = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(b, e, hp.port);
  if (ec != std::errc() || ptr != e || hp.port < 0 || hp.port > 65535) {
    error = fmt::format("\"{}\": port must be a number 0-65535", text);
    return std::nullopt;
  }
  return hp;
}

}  // namespace stepscope::monitor
