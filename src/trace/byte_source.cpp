#include "trace/byte_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "trace/gzip_source.h"

namespace stepscope::trace {

FileReader::~FileReader() {
  if (fd_ >= 0) ::close(fd_);
}

ReadResult FileReader::read(char* buffer, size_t capacity) {
  ReadResult r;
  while (r.bytes < capacity) {
    ssize_t n = ::read(fd_, buffer + r.bytes, capacity - r.bytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      r.error = std::string("read failed: ") + std::strerror(errno);
      return r;
    }
    if (n == 0) {
      r.eof = true;
      break;
    }
    r.bytes += static_cast<size_t>(n);
    offset_ += static_cast<uint64_t>(n);
  }
  return r;
}

namespace {

class PlainSource final : public ByteSource {
 public:
  PlainSource(int fd, std::string prefix) : file_(fd), prefix_(std::move(prefix)) {}
  ReadResult read(char* buffer, size_t capacity) override {
    // The bytes sniffed for the gzip magic are handed out first.
    size_t from_prefix = 0;
    if (prefix_pos_ < prefix_.size()) {
      from_prefix = std::min(capacity, prefix_.size() - prefix_pos_);
      std::memcpy(buffer, prefix_.data() + prefix_pos_, from_prefix);
      prefix_pos_ += from_prefix;
    }
    ReadResult r = from_prefix < capacity ? file_.read(buffer + from_prefix, capacity - from_prefix)
                                          : ReadResult{};
    r.bytes += from_prefix;
    return r;
  }
  uint64_t file_offset() const override { return file_.offset() - (prefix_.size() - prefix_pos_); }
  bool compressed() const override { return false; }

 private:
  FileReader file_;
  std::string prefix_;
  size_t prefix_pos_ = 0;
};

}  // namespace

std::unique_ptr<ByteSource> open_byte_source(const std::string& path, GzipBackend backend,
                                             std::string& error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = std::string("cannot open: ") + std::strerror(errno);
    return nullptr;
  }
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  char magic[2];
  ssize_t got = 0;
  while (got < 2) {
    ssize_t n = ::pread(fd, magic + got, 2 - got, got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += n;
  }
  bool gzip = got == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
              static_cast<unsigned char>(magic[1]) == 0x8b;
  if (gzip) return make_gzip_source(fd, backend);
  return std::make_unique<PlainSource>(fd, std::string());
}

}  // namespace stepscope::trace
