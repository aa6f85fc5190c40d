// The C++ side of the push protocol: what a training loop links to report
// step, loss, step time, tokens, grad norm and loss scale to `stepscope
// monitor`. push() never throws and never blocks for long: a monitor that is
// gone costs the training loop nothing but a false return.
#pragma once

#include <string>
#include <vector>

#include "monitor/push_protocol.h"

namespace stepscope::monitor {

class PushClient {
 public:
  PushClient() = default;
  PushClient(const PushClient&) = delete;
  PushClient& operator=(const PushClient&) = delete;
  ~PushClient() { close(); }
  // Connects to HOST:PORT; false with `error` when it cannot.
  bool connect(const std::string& host_port, std::string& error);
  // Sends one update (replies are not awaited); false once the connection
  // broke. A connection the monitor closed (idle timeout) is opened again.
  bool push(const TrainingUpdate& u);
  // Sends raw lines, closes the sending side and collects the monitor's
  // replies ("ok" or "error REASON: DETAIL"), one per line, within timeout_ms.
  std::vector<std::string> send_lines_and_wait(const std::vector<std::string>& lines, int timeout_ms);
  void close();

 private:
  bool send_all(const std::string& text);
  int fd_ = -1;
  std::string address_;  // for one reconnect when the monitor closed the connection
};

}  // namespace stepscope::monitor
