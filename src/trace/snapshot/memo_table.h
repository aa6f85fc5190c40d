// The unpickler's memo: memo slot -> value, for the slots a later GET reads.
// An open-addressing table (linear probing, at most half full), because a
// snapshot reads its memo tens of millions of times (every repeated key and
// frame is a GET) and std::unordered_map's node chasing showed in profiles.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/snapshot/pickle_value.h"

namespace stepscope::trace::snapshot {

class MemoTable {
 public:
  MemoTable() : keys_(16, kEmpty), values_(16) {}

  // The value stored in `slot`, or ValueArena::kNoValue.
  ValueId find(uint64_t slot) const {
    for (size_t i = index(slot);; i = (i + 1) & (keys_.size() - 1)) {
      if (keys_[i] == slot) return values_[i];
      if (keys_[i] == kEmpty) return ValueArena::kNoValue;
    }
  }
  // Stores `v` in `slot`; returns what was there before (kNoValue if nothing).
  ValueId put(uint64_t slot, ValueId v) {
    if (2 * (used_ + 1) > keys_.size()) grow();
    for (size_t i = index(slot);; i = (i + 1) & (keys_.size() - 1)) {
      if (keys_[i] == slot) {
        const ValueId old = values_[i];
        values_[i] = v;
        return old;
      }
      if (keys_[i] == kEmpty) {
        keys_[i] = slot;
        values_[i] = v;
        ++used_;
        return ValueArena::kNoValue;
      }
    }
  }
  template <class F>
  void for_each_value(F f) const {
    for (size_t i = 0; i < keys_.size(); ++i)
      if (keys_[i] != kEmpty) f(values_[i]);
  }

 private:
  static constexpr uint64_t kEmpty = UINT64_MAX;
  size_t index(uint64_t slot) const {
    return static_cast<size_t>((slot * 0x9E3779B97F4A7C15ull) >> 20) & (keys_.size() - 1);
  }
  void grow() {
    std::vector<uint64_t> keys(keys_.size() * 2, kEmpty);
    std::vector<ValueId> values(keys.size());
    keys.swap(keys_);
    values.swap(values_);
    used_ = 0;
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] != kEmpty) put(keys[i], values[i]);
  }
  std::vector<uint64_t> keys_;
  std::vector<ValueId> values_;
  size_t used_ = 0;
};

}  // namespace stepscope::trace::snapshot
