#include "trace/gzip_source.h"

#include <isa-l/igzip_lib.h>
#include <zlib.h>

#include <memory>
#include <string>
#include <vector>

namespace stepscope::trace {
namespace {

constexpr size_t kInputChunk = 256 << 10;  // compressed bytes per read(); small, as it is resident per open file

std::string at_offset(const std::string& what, uint64_t offset) {
  return what + " at compressed byte " + std::to_string(offset);
}

// Shared input side: refills from the file and tracks how far we are.
class CompressedInput {
 public:
  // Uninitialised: a small file touches only the pages it fills.
  explicit CompressedInput(int fd) : file_(fd), buffer_(new char[kInputChunk]) {}
  // Returns false and sets error on a read failure.
  bool refill(const unsigned char*& next, size_t& avail, std::string& error) {
    ReadResult r = file_.read(buffer_.get(), kInputChunk);
    if (!r.error.empty()) {
      error = r.error;
      return false;
    }
    eof_ = r.eof;
    next = reinterpret_cast<const unsigned char*>(buffer_.get());
    avail = r.bytes;
    return true;
  }
  bool eof() const { return eof_; }
  uint64_t offset() const { return file_.offset(); }

  // What follows a gzip member that ended with `avail` input bytes left at
  // `next`: another member, the end of the file, or zero bytes up to the end
  // (padding that block-based writers leave; gzip and Python's gzip accept
  // it) which are skipped. A non-zero byte after such padding is an error.
  enum class AfterMember { kNextMember, kEnd, kError };
  AfterMember after_member(const unsigned char*& next, size_t& avail, std::string& error) {
    bool padding = false;
    while (true) {
      while (avail > 0 && *next == 0) {
        ++next;
        --avail;
        padding = true;
      }
      if (avail > 0) {
        if (!padding) return AfterMember::kNextMember;
        error = at_offset("non-zero byte after the zero padding that follows the last gzip member",
                          offset() - avail);
        return AfterMember::kError;
      }
      if (eof_) return AfterMember::kEnd;
      if (!refill(next, avail, error)) return AfterMember::kError;
    }
  }

 private:
  FileReader file_;
  std::unique_ptr<char[]> buffer_;
  bool eof_ = false;
};

class IsalGzipSource final : public ByteSource {
 public:
  explicit IsalGzipSource(int fd) : input_(fd) {
    isal_inflate_init(&state_);
    state_.crc_flag = ISAL_GZIP;
  }

  ReadResult read(char* buffer, size_t capacity) override {
    ReadResult r;
    if (done_) {
      r.eof = true;
      return r;
    }
    state_.next_out = reinterpret_cast<uint8_t*>(buffer);
    state_.avail_out = static_cast<uint32_t>(std::min<size_t>(capacity, UINT32_MAX));
    while (state_.avail_out > 0) {
      if (state_.avail_in == 0 && !input_.eof()) {
        const unsigned char* next = nullptr;
        size_t avail = 0;
        if (!input_.refill(next, avail, r.error)) break;
        state_.next_in = const_cast<uint8_t*>(next);
        state_.avail_in = static_cast<uint32_t>(avail);
        consumed_base_ = input_.offset() - avail;
      }
      int ret = isal_inflate(&state_);
      if (ret < 0) {
        r.error = at_offset(describe(ret), position());
        break;
      }
      if (state_.block_state == ISAL_BLOCK_FINISH) {
        // A gzip file may hold several members (pigz, concatenated files),
        // and zero padding after the last.
        const unsigned char* next = state_.next_in;
        size_t avail = state_.avail_in;
        const auto after = input_.after_member(next, avail, r.error);
        state_.next_in = const_cast<uint8_t*>(next);
        state_.avail_in = static_cast<uint32_t>(avail);
        if (after == CompressedInput::AfterMember::kError) break;
        if (after == CompressedInput::AfterMember::kEnd) {
          done_ = true;
          r.eof = true;
          break;
        }
        isal_inflate_reset(&state_);
        state_.crc_flag = ISAL_GZIP;
        continue;
      }
      if (state_.avail_in == 0 && input_.eof() && state_.avail_out > 0) {
        r.error = at_offset("truncated gzip stream (input ended before the end of the data)",
                            input_.offset());
        break;
      }
    }
    r.bytes = capacity - state_.avail_out;
    return r;
  }
  uint64_t file_offset() const override { return position(); }
  bool compressed() const override { return true; }

 private:
  uint64_t position() const { return input_.offset() - state_.avail_in; }
  static std::string describe(int ret) {
    switch (ret) {
      case ISAL_INVALID_BLOCK: return "corrupt gzip data (invalid deflate block)";
      case ISAL_INVALID_SYMBOL: return "corrupt gzip data (invalid deflate symbol)";
      case ISAL_INVALID_LOOKBACK: return "corrupt gzip data (invalid back-reference)";
      case ISAL_INVALID_WRAPPER: return "corrupt gzip header";
      case ISAL_INCORRECT_CHECKSUM: return "gzip checksum mismatch";
      default: return "gzip decode error " + std::to_string(ret);
    }
  }

  CompressedInput input_;
  inflate_state state_{};
  uint64_t consumed_base_ = 0;
  bool done_ = false;
};

class ZlibGzipSource final : public ByteSource {
 public:
  explicit ZlibGzipSource(int fd) : input_(fd) {
    stream_ = {};
    ok_ = inflateInit2(&stream_, 16 + MAX_WBITS) == Z_OK;
  }
  ~ZlibGzipSource() override { inflateEnd(&stream_); }

  ReadResult read(char* buffer, size_t capacity) override {
    ReadResult r;
    if (!ok_) {
      r.error = "zlib initialisation failed";
      return r;
    }
    if (done_) {
      r.eof = true;
      return r;
    }
    stream_.next_out = reinterpret_cast<Bytef*>(buffer);
    stream_.avail_out = static_cast<uInt>(std::min<size_t>(capacity, UINT32_MAX));
    while (stream_.avail_out > 0) {
      if (stream_.avail_in == 0 && !input_.eof()) {
        const unsigned char* next = nullptr;
        size_t avail = 0;
        if (!input_.refill(next, avail, r.error)) break;
        stream_.next_in = const_cast<Bytef*>(next);
        stream_.avail_in = static_cast<uInt>(avail);
      }
      int ret = inflate(&stream_, Z_NO_FLUSH);
      if (ret == Z_STREAM_END) {
        const unsigned char* next = stream_.next_in;
        size_t avail = stream_.avail_in;
        const auto after = input_.after_member(next, avail, r.error);
        stream_.next_in = const_cast<Bytef*>(next);
        stream_.avail_in = static_cast<uInt>(avail);
        if (after == CompressedInput::AfterMember::kError) break;
        if (after == CompressedInput::AfterMember::kEnd) {
          done_ = true;
          r.eof = true;
          break;
        }
        inflateReset(&stream_);
        continue;
      }
      if (ret == Z_BUF_ERROR && stream_.avail_in == 0 && input_.eof()) {
        r.error = at_offset("truncated gzip stream (input ended before the end of the data)",
                            input_.offset());
        break;
      }
      if (ret != Z_OK && ret != Z_BUF_ERROR) {
        r.error = at_offset(std::string("corrupt gzip data (") +
                                (stream_.msg ? stream_.msg : "zlib error") + ")",
                            position());
        break;
      }
    }
    r.bytes = capacity - stream_.avail_out;
    return r;
  }
  uint64_t file_offset() const override { return position(); }
  bool compressed() const override { return true; }

 private:
  uint64_t position() const { return input_.offset() - stream_.avail_in; }
  CompressedInput input_;
  z_stream stream_;
  bool ok_ = false;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<ByteSource> make_gzip_source(int fd, GzipBackend backend) {
  if (backend == GzipBackend::kZlib) return std::make_unique<ZlibGzipSource>(fd);
  return std::make_unique<IsalGzipSource>(fd);
}

}  // namespace stepscope::trace
