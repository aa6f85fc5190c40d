#include "trace/snapshot/pickle_scanner.h"

#include <fmt/format.h>

#include <cstring>

namespace stepscope::trace::snapshot {
namespace {

constexpr size_t kChunk = 1 << 20;
constexpr size_t kMaxLine = 4096;  // protocol-0 numbers and names are short

uint64_t little_endian(const char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

}  // namespace

PickleScanner::PickleScanner(ByteSource& source, uint64_t max_argument_bytes)
    : source_(source), max_argument_(max_argument_bytes), buf_(kChunk) {}

ScanStatus PickleScanner::fail(std::string message) {
  error_ = std::move(message);
  return ScanStatus::kError;
}

bool PickleScanner::ensure(uint64_t n) {
  if (end_ - pos_ >= n) return true;
  if (!error_.empty()) return false;
  // Slide the unread bytes to the front, grow only for one long argument.
  std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
  base_ += pos_;
  end_ -= pos_;
  pos_ = 0;
  if (buf_.size() < n) buf_.resize(n);
  else if (buf_.size() > kChunk && n <= kChunk) buf_.resize(kChunk), buf_.shrink_to_fit();
  while (end_ < n && !eof_) {
    const ReadResult r = source_.read(buf_.data() + end_, buf_.size() - end_);
    if (!r.error.empty()) {
      error_ = r.error;
      return false;
    }
    end_ += r.bytes;
    eof_ = r.eof;
    if (r.bytes == 0 && !r.eof) continue;
  }
  return end_ - pos_ >= n;
}

bool PickleScanner::read_line(std::string_view& line) {
  for (size_t scanned = 0;;) {
    const char* start = buf_.data() + pos_;
    const void* nl = std::memchr(start + scanned, '\n', end_ - pos_ - scanned);
    if (nl) {
      const size_t len = static_cast<const char*>(nl) - start;
      line = std::string_view(start, len);
      pos_ += len + 1;
      return true;
    }
    scanned = end_ - pos_;
    if (scanned > kMaxLine) {
      error_ = fmt::format("a text argument at offset {} is longer than {} bytes", offset(), kMaxLine);
      return false;
    }
    if (!ensure(scanned + 1)) return false;
  }
}

ScanStatus PickleScanner::next(PickleInstr& out) {
  // Fast path: an instruction with a fixed-size argument (or a short string)
  // lies whole in the buffer, as nearly all do.
  if (end_ - pos_ >= 10) {
    const char* p = buf_.data() + pos_;
    const auto code = static_cast<uint8_t>(p[0]);
    const PickleOpInfo& info = kPickleOps[code];
    int width = -1;
    switch (info.arg) {
      case PickleArg::kNone: width = 0; break;
      case PickleArg::kU1: width = 1; break;
      case PickleArg::kU2: width = 2; break;
      case PickleArg::kI4:
      case PickleArg::kU4: width = 4; break;
      case PickleArg::kU8: width = 8; break;
      case PickleArg::kBytesU1: {
        const auto len = static_cast<uint8_t>(p[1]);
        if (info.known && end_ - pos_ >= 2u + len && len <= max_argument_) {
          out.op = static_cast<PickleOp>(code);
          out.offset = base_ + pos_;
          out.number = len;
          out.text = std::string_view(p + 2, len);
          pos_ += 2 + len;
          return ScanStatus::kOk;
        }
        break;
      }
      default: break;
    }
    if (info.known && width >= 0) {
      out.op = static_cast<PickleOp>(code);
      out.offset = base_ + pos_;
      out.text = {};
      out.number = width ? little_endian(p + 1, width) : 0;
      if (info.arg == PickleArg::kI4)
        out.number = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(out.number))));
      pos_ += 1 + width;
      return ScanStatus::kOk;
    }
  }
  if (!ensure(1)) {
    if (!error_.empty()) return ScanStatus::kError;
    return ScanStatus::kEnd;
  }
  out.offset = offset();
  const uint8_t code = static_cast<uint8_t>(buf_[pos_]);
  const PickleOpInfo& info = pickle_op_info(code);
  if (!info.known) return fail(fmt::format("byte 0x{:02x} at offset {} is not a pickle opcode", code, out.offset));
  ++pos_;
  out.op = static_cast<PickleOp>(code);
  out.text = out.text2 = {};
  auto truncated = [&] {
    if (!error_.empty()) return ScanStatus::kError;
    return fail(fmt::format("truncated pickle: {} at offset {} runs past the end of the file", info.name, out.offset));
  };
  auto fixed = [&](int n) -> bool {
    if (!ensure(n)) return false;
    out.number = little_endian(buf_.data() + pos_, n);
    pos_ += n;
    return true;
  };
  auto counted = [&](uint64_t len) -> ScanStatus {
    if (len > max_argument_)
      return fail(fmt::format("{} at offset {} holds {} bytes, above the reader's limit of {}", info.name, out.offset,
                              len, max_argument_));
    if (!ensure(len)) return truncated();
    out.text = std::string_view(buf_.data() + pos_, len);
    pos_ += len;
    return ScanStatus::kOk;
  };
  switch (info.arg) {
    case PickleArg::kNone:
      return ScanStatus::kOk;
    case PickleArg::kU1:
      return fixed(1) ? ScanStatus::kOk : truncated();
    case PickleArg::kU2:
      return fixed(2) ? ScanStatus::kOk : truncated();
    case PickleArg::kU4:
      return fixed(4) ? ScanStatus::kOk : truncated();
    case PickleArg::kU8:
      return fixed(8) ? ScanStatus::kOk : truncated();
    case PickleArg::kI4:
      if (!fixed(4)) return truncated();
      out.number = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(out.number))));
      return ScanStatus::kOk;
    case PickleArg::kF8: {
      if (!ensure(8)) return truncated();
      uint64_t bits = 0;
      for (int i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<uint8_t>(buf_[pos_ + i]);  // big-endian
      pos_ += 8;
      std::memcpy(&out.real, &bits, 8);
      return ScanStatus::kOk;
    }
    case PickleArg::kLine:
      return read_line(out.text) ? ScanStatus::kOk : truncated();
    case PickleArg::kLine2:
      return read_line(out.text) && read_line(out.text2) ? ScanStatus::kOk : truncated();
    case PickleArg::kBytesU1:
      if (!fixed(1)) return truncated();
      return counted(out.number);
    case PickleArg::kBytesU4:
      if (!fixed(4)) return truncated();
      return counted(out.number);
    case PickleArg::kBytesI4: {
      if (!fixed(4)) return truncated();
      const int32_t len = static_cast<int32_t>(static_cast<uint32_t>(out.number));
      if (len < 0) return fail(fmt::format("{} at offset {} has a negative length", info.name, out.offset));
      return counted(static_cast<uint64_t>(len));
    }
    case PickleArg::kBytesU8:
      if (!fixed(8)) return truncated();
      return counted(out.number);
  }
  return fail("unreachable");
}

}  // namespace stepscope::trace::snapshot
