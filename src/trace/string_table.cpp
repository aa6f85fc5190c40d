#include "trace/string_table.h"

namespace stepscope::trace {

size_t StringTable::Hash::operator()(std::string_view s) const noexcept {
  // FNV-1a: names are short and this is on the per-event hot path.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return static_cast<size_t>(h);
}

StringTable::StringTable() { intern(""); }

StringId StringTable::intern(std::string_view s) {
  auto it = index_.find(s);
  if (it != index_.end()) return it->second;
  storage_.emplace_back(s);
  std::string_view stored = storage_.back();
  auto id = static_cast<StringId>(views_.size());
  views_.push_back(stored);
  index_.emplace(stored, id);
  return id;
}

StringId StringTable::find(std::string_view s) const {
  auto it = index_.find(s);
  return it == index_.end() ? kMissing : it->second;
}

}  // namespace stepscope::trace
