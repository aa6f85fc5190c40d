// CPU time of the calling thread, for the benchmarks that time one stage of
// a process (wall time would count the other threads' work and waits).
#pragma once

#include <ctime>

namespace stepscope::bench {

inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace stepscope::bench
