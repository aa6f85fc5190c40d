// Where the generator's JSON text goes: a plain file, a gzip file (ISA-L's
// fast deflate, so a 1 GB set is written in seconds rather than minutes), or
// nowhere (a dry run that only counts bytes, used to size a trace set).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace stepscope::synth {

class OutputSink {
 public:
  virtual ~OutputSink() = default;
  // Appends uncompressed bytes. Returns false once the sink has failed.
  virtual bool write(std::string_view bytes) = 0;
  // Flushes and closes; false (with `error` set) if anything failed.
  virtual bool close(std::string& error) = 0;
  uint64_t uncompressed_bytes() const { return bytes_; }

 protected:
  uint64_t bytes_ = 0;
};

// Counts bytes and keeps none.
std::unique_ptr<OutputSink> make_counting_sink();
// `gzip_level` 0 writes plain JSON; 1..3 writes gzip at that ISA-L level.
std::unique_ptr<OutputSink> make_file_sink(const std::string& path, int gzip_level,
                                           std::string& error);

}  // namespace stepscope::synth
