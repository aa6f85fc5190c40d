// Interned strings: every event name, category and string argument is stored
// once per rank and referred to by a dense 32-bit id. Trace files repeat the
// same few thousand kernel and operator names millions of times, so interning
// is what keeps the store smaller than the JSON it came from.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
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
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept;
  };
  // Strings live in stable deque storage so the views and map keys never move.
  std::deque<std::string> storage_;
  std::vector<std::string_view> views_;
  std::unordered_map<std::string_view, StringId, Hash, std::equal_to<>> index_;
};

}  // namespace stepscope::trace
