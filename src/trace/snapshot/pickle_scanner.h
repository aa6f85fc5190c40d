// Cuts a pickle byte stream into instructions (opcode + decoded argument),
// reading the source in chunks: the reader never holds more of the file than
// one chunk plus the largest single argument, which is capped. It neither
// executes nor judges opcodes: the reference pass and the machine do.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trace/byte_source.h"
#include "trace/snapshot/pickle_opcodes.h"

namespace stepscope::trace::snapshot {

struct PickleInstr {
  PickleOp op = PickleOp::kStop;
  uint64_t offset = 0;    // byte offset of the opcode in the (uncompressed) stream
  uint64_t number = 0;    // kU1, kU2, kU4, kU8 arguments; kI4 as a sign-extended value
  double real = 0;        // kF8
  std::string_view text;  // kLine and counted bytes; valid until the next call
  std::string_view text2; // kLine2's second line
};

enum class ScanStatus { kOk, kEnd, kError };

class PickleScanner {
 public:
  // max_argument_bytes: the largest string/bytes argument accepted (a longer
  // one is an error naming its offset, never an allocation of that size).
  PickleScanner(ByteSource& source, uint64_t max_argument_bytes);

  // kEnd: the stream ended cleanly between instructions.
  ScanStatus next(PickleInstr& out);
  const std::string& error() const { return error_; }
  // Bytes of the stream consumed so far.
  uint64_t offset() const { return base_ + pos_; }

 private:
  // Makes n bytes from pos_ available; false at end of input or on error.
  bool ensure(uint64_t n);
  bool read_line(std::string_view& line);
  ScanStatus fail(std::string message);

  ByteSource& source_;
  uint64_t max_argument_;
  std::vector<char> buf_;
  size_t pos_ = 0, end_ = 0;
  uint64_t base_ = 0;  // stream offset of buf_[0]
  bool eof_ = false;
  std::string error_;
};

}  // namespace stepscope::trace::snapshot
