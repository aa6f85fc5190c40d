// How much faster GPU work can shorten a step. A step's window runs from one
// CPU step start to the next, so it is as long as the host takes; work the
// GPU finishes sooner shortens it only where the host was waiting for that
// work: blocked in a sync, or in a launch into a full queue. Where the host
// never waited (a host-bound step), faster kernels only lengthen the GPU's
// idle gaps. Definitions: docs/findings.md, "How savings are bounded".
#pragma once

#include <cstdint>
#include <vector>

#include "diagnose/detector.h"

namespace stepscope::diagnose {

// A runtime call at least this long blocked the thread (an ordinary launch
// takes 2-20 µs under the profiler): a launch into a full queue waits for a
// kernel to finish.
inline constexpr int64_t kBlockedCallNs = 50'000;

// Per attribution step of a rank: the time its host threads were blocked on
// the GPU while the GPU worked. The union of the sync calls (HostIndex::syncs)
// and the runtime calls of at least kBlockedCallNs, counted where the GPU was
// busy (gpu_busy_within).
std::vector<int64_t> host_wait_on_gpu(const RankView& r);

// Caps each step's `saving` of faster GPU work at host_wait_on_gpu, where the
// trace can tell: ProfilerStep windows and runtime calls recorded. The last
// window is left as it is: it extends to the end of the GPU work launched in
// it, which the GPU sets. Returns the ns the cap removed.
int64_t cap_at_host_wait(const RankView& r, std::vector<int64_t>& saving);

}  // namespace stepscope::diagnose
