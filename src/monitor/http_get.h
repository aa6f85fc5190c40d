// A minimal HTTP/1.0 GET over TCP: how the tests and the scrape benchmark
// read /metrics without an HTTP client library.
#pragma once

#include <optional>
#include <string>

namespace stepscope::monitor {

struct HttpResponse {
  int status = 0;
  std::string body;
};

// GET http://host:port/path; nullopt when the connection fails or times out.
std::optional<HttpResponse> http_get(const std::string& host, int port, const std::string& path, int timeout_ms = 5000);

}  // namespace stepscope::monitor
