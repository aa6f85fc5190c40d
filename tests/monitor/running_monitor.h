// A MonitorService running on its own thread for one test, with its log kept.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "monitor/http_get.h"
#include "monitor/monitor_service.h"
#include "monitor/push_client.h"

namespace stepscope::monitor {

struct Running {
  std::mutex mu;
  std::vector<std::string> log;
  MonitorService service;
  std::thread thread;
  explicit Running(MonitorOptions o)
      : service(std::move(o), [this](const std::string& l) {
          std::lock_guard lock(mu);
          log.push_back(l);
        }) {
    std::string error;
    EXPECT_TRUE(service.start(error)) << error;
    thread = std::thread([this] { service.run(); });
  }
  ~Running() {
    service.stop();
    thread.join();
  }
  std::string scrape() {
    auto r = http_get("127.0.0.1", service.metrics_port(), "/metrics", 10000);
    EXPECT_TRUE(r.has_value());
    return r ? r->body : "";
  }
  // Scrapes until `needle` appears on a sample line (bounded: 20 s, for loaded
  // sanitizer runs). HELP/TYPE comment lines do not count: the exposition
  // prints them for a family before it has any series, so a bare metric name
  // would match at once.
  std::string scrape_until(const std::string& needle) {
    std::string text;
    for (int i = 0; i < 400; ++i) {
      text = scrape();
      if (on_sample_line(text, needle)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return text;
  }
  static bool on_sample_line(const std::string& text, const std::string& needle) {
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
      const size_t line = text.rfind('\n', at);
      if (text[line == std::string::npos ? 0 : line + 1] != '#') return true;
    }
    return false;
  }
  // Connects `client` to this monitor's push port.
  bool connect(PushClient& client) {
    std::string error;
    const bool ok = client.connect("127.0.0.1:" + std::to_string(service.push_port()), error);
    EXPECT_TRUE(ok) << error;
    return ok;
  }
  bool logged(const std::string& needle) {
    std::lock_guard lock(mu);
    for (const auto& l : log)
      if (l.find(needle) != std::string::npos) return true;
    return false;
  }
};

}  // namespace stepscope::monitor
