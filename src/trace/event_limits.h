// The ranges the reader accepts for times and record sizes. They are set so
// that everything the analyses compute from accepted values fits int64:
// with 0 <= ts <= kMaxTimeNs and 0 <= dur <= kMaxTimeNs an event's end is at
// most 2^62 ns, and the difference of any two starts or ends (or a base time
// plus a time) stays within +-2^62, far from the int64 limit of 2^63.
// A record outside them is skipped and counted (docs/robustness.md).
#pragma once

#include <cstddef>
#include <cstdint>

namespace stepscope::trace {

// 2^61 ns is 73 years: Unix-epoch timestamps in ns (1.8e18 in 2026) fit until
// 2043, and no profiled interval comes near it.
constexpr int64_t kMaxTimeNs = int64_t{1} << 61;

// Largest single JSON record (a traceEvents element or a top-level member)
// the reader buffers. Real Kineto records are 0.1-6 KB (the largest in the
// conformance traces is about 6 KB); a record larger than this is refused
// before it is buffered, so memory stays bounded on hostile input.
constexpr size_t kMaxRecordBytes = size_t{64} << 20;

constexpr bool time_in_range(int64_t ns) { return ns >= 0 && ns <= kMaxTimeNs; }

}  // namespace stepscope::trace
