#include "report/file_sink.h"

#include <isa-l/igzip_lib.h>

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
  AtomicOutput out;
  isal_zstream stream{};
  std::vector<uint8_t> level_buf;
  std::vector<uint8_t> zbuf;  // compressed bytes on their way to the file
};

FileSink::FileSink(const std::string& path) : path_(path), impl_(std::make_unique<Impl>()) {
  impl_->out = AtomicOutput::open(path);
  open();
}

FileSink::FileSink(AtomicOutput out) : path_(out.path()), impl_(std::make_unique<Impl>()) {
  impl_->out = std::move(out);
  open();
}

void FileSink::open() {
  if (!impl_->out.ok()) {
    error_ = impl_->out.error().empty() ? path_ + ": cannot write: not open" : impl_->out.error();
    return;
  }
  compressed_ = !impl_->out.is_stdout() && is_gzip_path(path_);
  if (compressed_) {
    isal_deflate_init(&impl_->stream);
    impl_->stream.gzip_flag = IGZIP_GZIP;
    impl_->stream.level = 1;
    impl_->level_buf.resize(ISAL_DEF_LVL1_DEFAULT);
    impl_->stream.level_buf = impl_->level_buf.data();
    impl_->stream.level_buf_size = static_cast<uint32_t>(impl_->level_buf.size());
    impl_->zbuf.resize(kBufferBytes);
  }
  buffer_.reserve(kBufferBytes);
}

FileSink::~FileSink() {
  if (!closed_) impl_->out.discard();
}

void FileSink::fail(std::string what) {
  if (error_.empty()) error_ = path_ + ": cannot write: " + what;
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
    if (!impl_->out.write(buffer_)) error_ = impl_->out.error();
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
    s.next_out = impl_->zbuf.data();
    s.avail_out = static_cast<uint32_t>(impl_->zbuf.size());
    if (isal_deflate(&s) != COMP_OK) {
      fail("gzip compression failed");
      break;
    }
    size_t produced = impl_->zbuf.size() - s.avail_out;
    if (produced > 0 && !impl_->out.write({reinterpret_cast<const char*>(impl_->zbuf.data()), produced})) {
      error_ = impl_->out.error();
      break;
    }
  } while (s.avail_in > 0 || (last && s.internal_state.state != ZSTATE_END));
  buffer_.clear();
}

bool FileSink::close() {
  if (closed_) return ok();
  closed_ = true;
  if (!ok()) {
    impl_->out.discard();
    return false;
  }
  flush_buffer(true);
  if (!ok()) {
    impl_->out.discard();
  } else if (!impl_->out.commit()) {
    error_ = impl_->out.error();
  }
  return ok();
}

}  // namespace stepscope::report
