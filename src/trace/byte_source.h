// Byte sources: a trace file as a stream of uncompressed bytes, read in
// chunks so a multi-GB trace never has to sit in memory whole. Gzip is
// recognised by its magic bytes, not by the file name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace stepscope::trace {

enum class GzipBackend { kIsal, kZlib };

struct ReadResult {
  size_t bytes = 0;    // bytes written to the buffer
  bool eof = false;    // no more data after these bytes
  std::string error;   // non-empty: the stream is broken at this point
};

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Fills up to `capacity` bytes; returns fewer only at eof or on error.
  virtual ReadResult read(char* buffer, size_t capacity) = 0;
  // Bytes of the file consumed so far (compressed bytes for gzip).
  virtual uint64_t file_offset() const = 0;
  virtual bool compressed() const = 0;
};

// Opens `path`; on failure returns nullptr and sets `error` to a one-line reason.
std::unique_ptr<ByteSource> open_byte_source(const std::string& path, GzipBackend backend,
                                             std::string& error);

// The raw file reader, used by the gzip sources underneath.
class FileReader {
 public:
  explicit FileReader(int fd) : fd_(fd) {}
  ~FileReader();
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;
  ReadResult read(char* buffer, size_t capacity);
  uint64_t offset() const { return offset_; }

 private:
  int fd_;
  uint64_t offset_ = 0;
};

}  // namespace stepscope::trace
