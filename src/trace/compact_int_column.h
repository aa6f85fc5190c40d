// An int64 column kept in 4 bytes per row. Trace ids (correlation, External
// id), thread ids and stream numbers are int64 in the format but almost always
// small: such values are stored as they are, and the rare value outside
// [kLowest, INT32_MAX] goes to a side table that its row points into. Reads
// return the int64 value; rows can be reordered (the side table never moves).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace stepscope::trace {

class CompactInt64Column {
 public:
  // Values stored inline: [kLowest, INT32_MAX]. Codes below kLowest are
  // kLowest - 1 - (index into the side table).
  static constexpr int32_t kLowest = -(int32_t{1} << 30);

  int64_t operator[](size_t i) const {
    const int32_t c = codes_[i];
    return c >= kLowest ? c : wide_[static_cast<size_t>(int64_t{kLowest} - 1 - c)];
  }
  size_t size() const { return codes_.size(); }
  bool empty() const { return codes_.empty(); }
  void reserve(size_t n) { codes_.reserve(n); }
  void clear() {
    codes_.clear();
    wide_.clear();
  }

  void push_back(int64_t v) {
    if (v >= kLowest && v <= std::numeric_limits<int32_t>::max()) [[likely]] {
      codes_.push_back(static_cast<int32_t>(v));
      return;
    }
    push_wide(v);
  }

  // Drops rows [n, size()). Their wide values must be the last ones in the
  // side table, which holds while rows are only appended (the argument
  // column, which drops a rejected record's staged arguments).
  void truncate(size_t n) {
    for (size_t i = n; i < codes_.size(); ++i)
      if (codes_[i] < kLowest) wide_.pop_back();
    codes_.resize(std::min(n, codes_.size()));
  }

  // The per-row codes, for reordering rows (StoreBuilder's sort): moving a
  // code moves its value, wide or not.
  std::vector<int32_t>& codes() { return codes_; }
  // Values that did not fit in 32 bits.
  size_t wide_count() const { return wide_.size(); }

  friend bool operator==(const CompactInt64Column& a, const CompactInt64Column& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i]) return false;
    return true;
  }

 private:
  // Out of line, so that push_back (once per row and column while reading) stays small enough to inline.
  [[gnu::noinline]] void push_wide(int64_t v) {
    // kLowest - 1 - index must stay >= INT32_MIN.
    if (wide_.size() > static_cast<size_t>(int64_t{kLowest} - 1 - std::numeric_limits<int32_t>::min()))
      throw std::length_error("CompactInt64Column: too many values outside 32 bits");
    codes_.push_back(static_cast<int32_t>(int64_t{kLowest} - 1 - static_cast<int64_t>(wide_.size())));
    wide_.push_back(v);
  }

  std::vector<int32_t> codes_;
  std::vector<int64_t> wide_;
};

}  // namespace stepscope::trace
