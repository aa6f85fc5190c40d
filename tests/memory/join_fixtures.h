// A hand-written trace of the story of tests/data/snapshots/make_snapshots.py
// (snapshot_p4.pickle): its steps, ops on two threads, and, optionally, the
// [memory] events of its allocations, on a clock 2.5 ms ahead of the
// snapshot's. Shared by the join's unit test and the CLI test.
#pragma once

#include <string>
#include <vector>

#include "analysis/analysis_fixtures.h"

namespace stepscope::memory::join_fixtures {

using analysis::testing_support::host_span;
using analysis::testing_support::step;
using analysis::testing_support::us_text;

constexpr uint64_t MiB = 1 << 20;
constexpr int64_t kBase = 0x7F0000000000, kSmall = 0x7F0100000000;
constexpr int64_t kAhead = 2'500'000;  // the trace's clock, ns ahead of the snapshot's

// The story's event n happens at snapshot time 1 s + n ms; in the trace (base
// time 1 s) at n ms + 2.5 ms.
inline int64_t at(int n) { return 1'000'000LL * n + kAhead; }

inline std::string memory_event(int n, int64_t addr, int64_t bytes) {
  return R"({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": )" +
         us_text(at(n)) + R"(, "args": {"Addr": )" + std::to_string(addr) + R"(, "Bytes": )" + std::to_string(bytes) +
         R"(, "Total Allocated": 0, "Total Reserved": 0, "Device Id": 0, "Device Type": 1}})";
}

inline std::string op_on_thread(const std::string& name, int64_t ts_ns, int64_t dur_ns, int tid) {
  return stepscope::testing::x_event("cpu_op", name, us_text(ts_ns), us_text(dur_ns), "1", std::to_string(tid));
}

inline std::vector<std::string> trace_events(bool with_memory) {
  std::vector<std::string> ev = {
      step(1, 0, 5'500'000),
      step(2, 5'500'000, 5'500'000),
      host_span("cpu_op", "model.forward", 2'000'000, 3'000'000),  // around events 1 and 2
      host_span("cpu_op", "aten::mm", 3'400'000, 200'000),         // inside it, around event 1
      op_on_thread("aten::softmax", 5'400'000, 200'000, 2),        // another thread, around event 3
  };
  if (with_memory) {
    ev.push_back(memory_event(1, kBase, 8 * MiB));
    ev.push_back(memory_event(2, kBase + 8 * MiB, 4 * MiB));
    ev.push_back(memory_event(3, kBase + 12 * MiB, 6 * MiB));
    ev.push_back(memory_event(7, kSmall, 512));
  }
  return ev;
}

// The trace's header: its base time, 1 s after the epoch as the story's.
inline const char* kHeader = R"("baseTimeNanoseconds": 1000000000)";

}  // namespace stepscope::memory::join_fixtures
