// A ByteSource over bytes already in memory: the fuzzer and the tests feed the
// reader without a file. (To make records straddle read boundaries, give the
// tokenizer a small chunk size instead.)
#pragma once

#include <cstdint>
#include <string_view>

#include "trace/byte_source.h"

namespace stepscope::trace {

class MemorySource final : public ByteSource {
 public:
  // `bytes` must outlive the source; nothing is copied.
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}

  ReadResult read(char* buffer, size_t capacity) override;
  uint64_t file_offset() const override { return pos_; }
  bool compressed() const override { return false; }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

}  // namespace stepscope::trace
