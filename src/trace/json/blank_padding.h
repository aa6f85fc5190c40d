// Spaces in the kRecordPadding bytes after a record while the callbacks see
// it, the bytes that were there put back after. simdjson may look past the
// end of a malformed record (a value missing before '}'), and what lies there
// is whatever follows in the buffer: the next record, or the read buffer's
// zeroed padding when a read ended at the record. The same record then parsed
// one way or the other with the read size (the fuzzer found a record kept
// with 64 KB reads and rejected with 7-byte ones); with spaces after it, it
// is rejected every time.
#pragma once

#include <cstring>

#include "trace/json/json_tokenizer.h"

namespace stepscope::trace {

class BlankPadding {
 public:
  explicit BlankPadding(char* after) : after_(after) {
    std::memcpy(saved_, after_, kRecordPadding);
    std::memset(after_, ' ', kRecordPadding);
  }
  ~BlankPadding() { std::memcpy(after_, saved_, kRecordPadding); }
  BlankPadding(const BlankPadding&) = delete;
  BlankPadding& operator=(const BlankPadding&) = delete;

 private:
  char* after_;
  char saved_[kRecordPadding];
};

}  // namespace stepscope::trace
