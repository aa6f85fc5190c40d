// Sums over many events in int64 that stop at the int64 limits instead of
// wrapping. Each accepted time and byte count fits (trace/event_limits.h),
// but a sum over millions of them need not: a total that saturates stays a
// (too small) positive number, never a negative one.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace stepscope::analysis {

inline int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  return r;
}

inline __int128 saturating_add(__int128 a, __int128 b) {
  __int128 r;
  if (__builtin_add_overflow(a, b, &r)) {
    const __int128 max = static_cast<__int128>(~static_cast<unsigned __int128>(0) >> 1);
    return b > 0 ? max : -max - 1;
  }
  return r;
}

// acc += v without wrapping: the form every sum of times or bytes over a
// trace's events takes (e.g. durations near the 2^61 ns limit, summed).
inline void add_into(int64_t& acc, int64_t v) { acc = saturating_add(acc, v); }

// -a, with -INT64_MIN taken as INT64_MAX.
inline int64_t saturating_negate(int64_t a) {
  return a == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -a;
}

// A double as int64, clamped to the int64 range (NaN is 0): a cast of a value
// outside it is undefined behaviour.
inline int64_t saturating_int64(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (d <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

}  // namespace stepscope::analysis
