// Interned strings: every event name, category and string argument is stored
// once per rank and referred to by a dense 32-bit id. Trace files repeat the
// same few thousand kernel and operator names millions of times, so interning
// is what keeps the store smaller than the JSON it came from.
//
// intern() runs several times per event, so the table is built for it: an
// open-addressing index of (hash, id) pairs probed linearly, a hash that reads
// 8 bytes per step (kernel names run to hundreds of bytes), and the text in
// large arena blocks that never move.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace stepscope::trace {

using StringId = uint32_t;

class StringTable {
 public:
  StringTable();

  // Returns the id of `s`, adding it on first sight. Id 0 is the empty string.
  StringId intern(std::string_view s);

  // Id of `s` if present, otherwise kMissing.
  StringId find(std::string_view s) const;

  std::string_view get(StringId id) const { return views_[id]; }
  size_t size() const { return views_.size(); }

  static constexpr StringId kMissing = UINT32_MAX;

 private:
  struct Slot {
    uint32_t hash = 0;        // high bits of the 64-bit hash, to skip most compares
    StringId id = kMissing;   // kMissing: empty slot
  };
  static uint64_t hash(std::string_view s);
  // The slot holding `s`, or the empty slot where it would go.
  size_t probe(std::string_view s, uint64_t h) const;
  void grow();
  std::string_view store_text(std::string_view s);

  std::vector<Slot> slots_;  // power-of-two size, at most half full
  std::vector<std::string_view> views_;
  std::vector<std::unique_ptr<char[]>> blocks_;  // arena: views point here
  size_t block_used_ = 0;
  size_t block_size_ = 0;
};

}  // namespace stepscope::trace
