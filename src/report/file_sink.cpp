#include "report/file_sink.h"

#include <isa-l/igzip_lib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace stepscope::report {

namespace {
constexpr size_t kBufferBytes = 1 << 20;  // text gathered before each write / compress call
}

bool is_gzip_path(std::string_view path) { return path.size() > 3 && path.ends_with(".gz"); }

// The open file and, for ".gz", an ISA-L deflate stream at level 1: several
// hundred MB/s, so compressing a large trace costs little next to writing it.
class FileSink::Impl {
 public:
  FILE* file = nullptr;
  bool owns_file = false;
  isal_zstream stream{};
  std::vector<uint8_t> level_buf;
  std::vector<uint8_t> out;
};

FileSink::FileSink(const std::string& path) : path_(path), impl_(std::make_unique<Impl>()) {
  if (path == "-") {
    impl_->file = stdout;
  } else {
    impl_->file = std::fopen(path.c_str(), "wb");
    if (!impl_->file) {
      fail(std::strerror(errno));
      return;
    }
    impl_->owns_file = true;
  }
  compressed_ = path != "-" && is_gzip_path(path);
  if (compressed_) {
    isal_deflate_init(&impl_->stream);
    impl_->stream.gzip_flag = IGZIP_GZIP;
    impl_->stream.level = 1;
    impl_->level_buf.resize(ISAL_DEF_LVL1_DEFAULT);
    impl_->stream.level_buf = impl_->level_buf.data();
    impl_->stream.level_buf_size = static_cast<uint32_t>(impl_->level_buf.size());
    impl_->out.resize(kBufferBytes);
  }
  buffer_.reserve(kBufferBytes);
}

FileSink::~FileSink() { close(); }

void FileSink::fail(std::string what) {
  if (error_.empty()) error_ = path_ + ": " + what;
}

void FileSink::write(std::string_view text) {
  if (closed_ || !ok()) return;
  bytes_in_ += text.size();
  if (buffer_.size() + text.size() > kBufferBytes && !buffer_.empty()) flush_buffer(false);
  if (text.size() >= kBufferBytes) {
    buffer_.assign(text);
    flush_buffer(false);
  } else {
    buffer_.append(text);
  }
}

void FileSink::flush_buffer(bool last) {
  if (!ok()) return;
  if (!compressed_) {
    if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), impl_->file) != buffer_.size())
      fail(std::strerror(errno));
    buffer_.clear();
    return;
  }
  isal_zstream& s = impl_->stream;
  s.next_in = reinterpret_cast<uint8_t*>(buffer_.data());
  s.avail_in = static_cast<uint32_t>(buffer_.size());
  s.end_of_stream = last ? 1 : 0;
  s.flush = NO_FLUSH;
  // Deflate until the input is used up (and, at the end, the stream is closed).
  do {
    s.next_out = impl_->out.data();
    s.avail_out = static_cast<uint32_t>(impl_->out.size());
    if (isal_deflate(&s) != COMP_OK) {
      fail("gzip compression failed");
      break;
    }
    size_t produced = impl_->out.size() - s.avail_out;
    if (produced > 0 && std::fwrite(impl_->out.data(), 1, produced, impl_->file) != produced) {
      fail(std::strerror(errno));
      break;
    }
  } while (s.avail_in > 0 || (last && s.internal_state.state != ZSTATE_END));
  buffer_.clear();
}

bool FileSink::close() {
  if (closed_) return ok();
  closed_ = true;
  if (impl_->file) {
    flush_buffer(true);
    if (impl_->owns_file) {
      if (std::fclose(impl_->file) != 0) fail(std::strerror(errno));
    } else if (std::fflush(impl_->file) != 0) {
      fail(std::strerror(errno));
    }
    impl_->file = nullptr;
  }
  return ok();
}

}  // namespace stepscope::report
