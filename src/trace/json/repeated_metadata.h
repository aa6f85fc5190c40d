// Metadata records ("ph": "M") that a trace repeats byte for byte. Kineto's
// MTIA backend writes its process name, labels and sort index again and
// again: the MTIA test trace has 310,046 "M" records, 24 distinct, two thirds
// of its records. Reading a record again changes nothing while the names it
// sets are still the current ones, so the parser remembers the text of the
// metadata records it has read and skips an identical one without parsing it
// (a full parse costs ~1,700 instructions a record). Any name change
// forgets them all: a remembered record could then set a name again.
#pragma once

#include <algorithm>
#include <bitset>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace stepscope::trace {

class RepeatedMetadata {
 public:
  // Whether `raw` is byte-identical to a remembered record. A record whose
  // length no remembered record has costs one bit test; otherwise only the
  // remembered records of that length are compared.
  bool seen(std::string_view raw) const {
    if (raw.size() > kMaxRecordBytes || !lengths_[raw.size()]) return false;
    auto it = std::lower_bound(records_.begin(), records_.end(), raw.size(),
                               [](const std::string& r, size_t n) { return r.size() < n; });
    for (; it != records_.end() && it->size() == raw.size(); ++it)
      if (*it == raw) return true;
    return false;
  }

  // `raw` parsed into a metadata record that left no count or warning and
  // whose names are now current.
  void remember(std::string_view raw) {
    if (raw.size() > kMaxRecordBytes || records_.size() == kMaxRecords || seen(raw)) return;
    auto at = std::lower_bound(records_.begin(), records_.end(), raw.size(),
                               [](const std::string& r, size_t n) { return r.size() < n; });
    records_.emplace(at, raw);
    lengths_.set(raw.size());
  }

  void forget_all() {
    records_.clear();
    lengths_.reset();
  }

 private:
  // Metadata records are short and few are distinct; a trace of many
  // distinct ones (one thread name per thread) just stops being remembered.
  static constexpr size_t kMaxRecords = 64;
  static constexpr size_t kMaxRecordBytes = 512;
  std::vector<std::string> records_;  // by length
  std::bitset<kMaxRecordBytes + 1> lengths_;
};

}  // namespace stepscope::trace
