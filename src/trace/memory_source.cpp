#include "trace/memory_source.h"

#include <algorithm>
#include <cstring>

namespace stepscope::trace {

ReadResult MemorySource::read(char* buffer, size_t capacity) {
  ReadResult r;
  r.bytes = std::min(capacity, bytes_.size() - pos_);
  if (r.bytes > 0) std::memcpy(buffer, bytes_.data() + pos_, r.bytes);
  pos_ += r.bytes;
  r.eof = pos_ == bytes_.size();
  return r;
}

}  // namespace stepscope::trace
