// Metadata records ("ph": "M") that a trace repeats byte for byte. Kineto's
// MTIA backend writes its process name, labels and sort index again and
// again: the MTIA test trace has 310,046 "M" records, 24 distinct, two thirds
// of its records. Reading a record again changes nothing while the names it
// sets are still the current ones, so the parser remembers the text of the
// metadata records it has read and skips an identical one without parsing it
// (a full parse costs ~1,700 instructions a record). Any name change
// forgets them all: a remembered record could then set a name again.
#pragma once

#include <bitset>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace stepscope::trace {

class RepeatedMetadata {
 public:
  // Whether `raw` is byte-identical to a remembered record. A record whose
  // length no remembered record has costs one bit test.
  bool seen(std::string_view raw) const {
    if (!lengths_[raw.size() % kLengthBits]) return false;
    for (const std::string& r : records_)
      if (r == raw) return true;
    return false;
  }

  // `raw` parsed into a metadata record that left no count or warning and
  // whose names are now current.
  void remember(std::string_view raw) {
    if (raw.size() > kMaxRecordBytes || records_.size() == kMaxRecords || seen(raw)) return;
    records_.emplace_back(raw);
    lengths_.set(raw.size() % kLengthBits);
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
  static constexpr size_t kLengthBits = 1024;
  std::vector<std::string> records_;
  std::bitset<kLengthBits> lengths_;
};

}  // namespace stepscope::trace
