// Accepts training clients over TCP and feeds their lines into a
// TrainingState. One thread polls every connection: clients are few (one per
// training process) and each line is tiny. Every complete line is applied
// the moment it arrives, so a client that dies loses only its unfinished line.
//
// Abuse is bounded, never fatal (docs/monitor.md, "Limits of the push port"):
// a connection with no complete line for idle_timeout is closed, lines beyond
// a per-client token bucket are rejected, at most max_clients connections are
// held (when the table is full, the one longest without a complete line makes
// room for a newcomer), and descriptors near RLIMIT_NOFILE are left to
// /metrics. Each refusal is counted under
// stepscope_monitor_push_rejected_total{reason}.
//
// Only a complete line (ended by '\n', accepted or rejected) counts as
// activity. Bytes of an unfinished line do not: a client trickling a byte now
// and then without ever ending a line is as idle as a silent one.
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "monitor/host_port.h"
#include "monitor/training_state.h"

namespace stepscope::monitor {

struct PushLimits {
  double idle_timeout_seconds = 60;  // a connection with no complete line this long is closed
  double lines_per_second = 200;     // per connection, sustained (token bucket refill)
  // Per connection, at once (the bucket's size); 0: 5 s of lines_per_second,
  // at least 1000, so the lines a client buffered during a stall pass.
  double burst_lines = 0;
  size_t max_clients = 256;
  // When max_clients are held, a newcomer evicts the connection longest
  // without a complete line, provided that is at least this long; when every
  // connection sent a line more recently (or just connected), the newcomer
  // is refused instead.
  double eviction_grace_seconds = 1;
  // A connection whose descriptor is within this many of RLIMIT_NOFILE is
  // refused: the rest stay for /metrics scrapes and NVML.
  int descriptor_reserve = 32;
};

class PushServer {
 public:
  explicit PushServer(TrainingState& state, PushLimits limits = {});
  ~PushServer() { stop(); }
  // Binds and starts the thread; false with `error` when the address is unusable.
  bool start(const HostPort& where, std::string& error);
  void stop();
  int port() const { return port_; }

 private:
  void run();
  TrainingState& state_;
  PushLimits limits_;
  int listen_fd_ = -1;
  int wake_fd_[2] = {-1, -1};
  int port_ = 0;
  std::thread thread_;
};

}  // namespace stepscope::monitor
