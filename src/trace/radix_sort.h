// A stable sort by an unsigned 64-bit key for the large sorts of import
// (rows by start time, join keys): least-significant-digit radix, one byte per
// pass, and only over the key bytes that differ between the records.
//
// Why not std::sort: a trace's rows are close to time order but not in it
// (8-12% of consecutive starts descend in real traces), and a comparison sort
// then pays n log n compares, half of them mispredicted branches. Here each
// pass reads and scatters every record once without a data-dependent branch,
// and a trace spanning seconds has 4-5 varying bytes of nanoseconds.
//
// Costs one scratch copy of the records (n * sizeof(T)) while it runs.
//
//   stable_radix_sort(keys, [](uint64_t k) { return k; });
//   stable_radix_sort(rows, [](const Row& r) { return r.ts; }, /*low_bit=*/0);
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace stepscope::trace {

// Sorts `v` by key_of(record) ascending; records with equal keys keep their
// order. Key bits below `low_bit` are ignored (they sort as equal): a caller
// whose keys hold the row index in their low bits sorts only the rest, and
// stability keeps the index order.
template <typename T, typename KeyOf>
void stable_radix_sort(std::vector<T>& v, KeyOf key_of, int low_bit = 0) {
  static_assert(std::is_trivially_copyable_v<T>);
  const size_t n = v.size();
  if (n < 2) return;
  const uint64_t ignored = low_bit >= 64 ? ~uint64_t{0} : (uint64_t{1} << low_bit) - 1;
  if (ignored == ~uint64_t{0}) return;
  // Below a few hundred records the histograms cost more than the sort.
  if (n < 256) {
    std::stable_sort(v.begin(), v.end(), [&](const T& a, const T& b) {
      return (static_cast<uint64_t>(key_of(a)) & ~ignored) < (static_cast<uint64_t>(key_of(b)) & ~ignored);
    });
    return;
  }

  // The bytes that differ between records: only those need a pass.
  const uint64_t first = static_cast<uint64_t>(key_of(v[0]));
  uint64_t varying = 0;
  for (const T& r : v) varying |= static_cast<uint64_t>(key_of(r)) ^ first;
  varying &= ~ignored;
  std::array<int, 8> digits{};
  int passes = 0;
  for (int d = 0; d < 8; ++d)
    if ((varying >> (8 * d)) & 0xff) digits[passes++] = d;
  if (passes == 0) return;

  // Every pass's histogram in one read of the keys.
  std::vector<std::array<size_t, 256>> counts(passes);
  for (auto& c : counts) c.fill(0);
  const uint64_t kept = ~ignored;
  for (const T& r : v) {
    const uint64_t k = static_cast<uint64_t>(key_of(r)) & kept;
    for (int p = 0; p < passes; ++p) ++counts[p][(k >> (8 * digits[p])) & 0xff];
  }

  std::vector<T> scratch(n);
  T* from = v.data();
  T* to = scratch.data();
  for (int p = 0; p < passes; ++p) {
    std::array<size_t, 256>& next = counts[p];
    size_t offset = 0;
    for (size_t& c : next) {
      const size_t here = c;
      c = offset;
      offset += here;
    }
    const int shift = 8 * digits[p];
    for (size_t i = 0; i < n; ++i) {
      const uint64_t k = static_cast<uint64_t>(key_of(from[i])) & kept;
      to[next[(k >> shift) & 0xff]++] = from[i];
    }
    std::swap(from, to);
  }
  if (from != v.data()) v.swap(scratch);
}

}  // namespace stepscope::trace
