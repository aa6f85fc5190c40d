// Accepts training clients over TCP and feeds their lines into a
// TrainingState. One thread polls every connection: clients are few (one per
// training process) and each line is tiny. Every complete line is applied
// the moment it arrives, so a client that dies loses only its unfinished line.
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "monitor/host_port.h"
#include "monitor/training_state.h"

namespace stepscope::monitor {

class PushServer {
 public:
  explicit PushServer(TrainingState& state) : state_(state) {}
  ~PushServer() { stop(); }
  // Binds and starts the thread; false with `error` when the address is unusable.
  bool start(const HostPort& where, std::string& error);
  void stop();
  int port() const { return port_; }

 private:
  void run();
  TrainingState& state_;
  int listen_fd_ = -1;
  int wake_fd_[2] = {-1, -1};
  int port_ = 0;
  std::thread thread_;
};

}  // namespace stepscope::monitor
