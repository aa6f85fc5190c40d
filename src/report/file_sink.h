// Where a report's text goes: a plain file, or a gzip file when the path ends
// in ".gz". Writers append text in pieces of any size; the sink buffers, so a
// multi-gigabyte Perfetto trace never exists in memory as one string. The file
// is an AtomicOutput: it appears whole at close(), or not at all.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "report/atomic_output.h"

namespace stepscope::report {

class FileSink {
 public:
  // Opens `path` for writing ("-" is stdout, never compressed). Check ok().
  explicit FileSink(const std::string& path);
  // Writes into an output the caller opened earlier (see AtomicOutput).
  explicit FileSink(AtomicOutput out);
  // Without close(), the output is discarded: an unfinished file never lands.
  ~FileSink();
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }  // one line naming the file
  bool compressed() const { return compressed_; }

  void write(std::string_view text);
  // Flushes and ends the gzip stream, then puts the file in place; returns
  // ok(). On failure the file is removed and error() says why.
  bool close();

  uint64_t bytes_in() const { return bytes_in_; }  // uncompressed bytes written, B

 private:
  class Impl;
  void fail(std::string what);
  void flush_buffer(bool last);

  void open();

  std::string path_;
  std::string error_;
  std::string buffer_;
  std::unique_ptr<Impl> impl_;
  bool compressed_ = false;
  bool closed_ = false;
  uint64_t bytes_in_ = 0;
};

// True when `path` names a gzip file (ends in ".gz").
bool is_gzip_path(std::string_view path);

}  // namespace stepscope::report
