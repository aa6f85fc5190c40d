#include "report/atomic_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <random>

namespace stepscope::report {

namespace {

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A fresh name beside `target`: ".<name>.<pid>-<n>-<random>.tmp". Hidden, so
// a folder listing (or `stepscope analyze FOLDER`) does not pick it up.
std::string temp_name(const std::string& target, unsigned attempt) {
  static std::atomic<unsigned> counter{0};
  static const unsigned seed = std::random_device{}();
  std::string folder = folder_of(target);
  std::string name = "." + base_of(target);
  if (name.size() > 200) name.resize(200);  // room for the suffix within NAME_MAX
  name += "." + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
          std::to_string((seed + attempt * 2654435761u) % 1000000) + ".tmp";
  return (folder == "/" ? "/" : folder + "/") + name;
}

}  // namespace

AtomicOutput AtomicOutput::open(const std::string& path) {
  AtomicOutput out;
  out.path_ = path;
  out.target_ = path;
  if (path == "-") {
    out.file_ = stdout;
    return out;
  }
  if (path.empty()) {
    out.reason_ = "no file name";
    out.error_ = "(empty path): cannot write: no file name";
    return out;
  }
  struct stat st{};
  mode_t keep_mode = 0;
  bool in_place = false;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      out.reason_ = "is a folder";
      out.error_ = path + ": cannot write: is a folder";
      return out;
    }
    if (!S_ISREG(st.st_mode)) {
      in_place = true;  // FIFO, device, socket: cannot be replaced by a rename
    } else {
      // A file the user may not write is not replaced behind their back.
      if (::access(path.c_str(), W_OK) != 0) {
        out.fail(errno);
        return out;
      }
      keep_mode = st.st_mode & 07777;
      // A link to a file: replace the file it points to, keep the link.
      struct stat lst{};
      if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
        if (char* real = ::realpath(path.c_str(), nullptr)) {
          out.target_ = real;
          std::free(real);
        }
      }
    }
  }
  if (in_place) {
    out.file_ = std::fopen(path.c_str(), "wb");
    if (!out.file_) {
      out.fail(errno);
      return out;
    }
    out.owns_file_ = true;
    return out;
  }
  int fd = -1;
  for (unsigned attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    out.temp_path_ = temp_name(out.target_, attempt);
    fd = ::open(out.temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    int err = errno;
    out.temp_path_.clear();
    out.fail(err);
    return out;
  }
  if (keep_mode) (void)::fchmod(fd, keep_mode);  // replacing a file keeps its permissions
  out.file_ = ::fdopen(fd, "wb");
  if (!out.file_) {
    int err = errno;
    ::close(fd);
    ::unlink(out.temp_path_.c_str());
    out.temp_path_.clear();
    out.fail(err);
    return out;
  }
  out.owns_file_ = true;
  return out;
}

AtomicOutput::AtomicOutput(AtomicOutput&& o) noexcept { *this = std::move(o); }

AtomicOutput& AtomicOutput::operator=(AtomicOutput&& o) noexcept {
  if (this != &o) {
    discard();
    path_ = std::move(o.path_);
    target_ = std::move(o.target_);
    temp_path_ = std::move(o.temp_path_);
    error_ = std::move(o.error_);
    reason_ = std::move(o.reason_);
    file_ = o.file_;
    owns_file_ = o.owns_file_;
    o.file_ = nullptr;
    o.owns_file_ = false;
    o.temp_path_.clear();
  }
  return *this;
}

AtomicOutput::~AtomicOutput() { discard(); }

void AtomicOutput::fail(int err) {
  if (!error_.empty()) return;
  reason_ = err ? std::strerror(err) : "write error";
  error_ = (is_stdout() ? std::string("standard output") : path_) + ": cannot write: " + reason_;
}

bool AtomicOutput::write(std::string_view bytes) {
  if (!ok()) return false;
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    fail(errno);
    return false;
  }
  return true;
}

void AtomicOutput::close_file() {
  if (file_ && owns_file_) std::fclose(file_);
  file_ = nullptr;
  owns_file_ = false;
}

bool AtomicOutput::commit() {
  if (!file_) {
    if (error_.empty()) reason_ = "not open", error_ = path_ + ": cannot write: not open";
    return false;
  }
  if (error_.empty()) {
    errno = 0;
    if (std::fflush(file_) != 0 || std::ferror(file_)) fail(errno);
  }
  if (owns_file_) {
    errno = 0;
    const int rc = std::fclose(file_);
    if (rc != 0) fail(errno);
  }
  file_ = nullptr;
  owns_file_ = false;
  if (!error_.empty()) {
    discard();
    return false;
  }
  if (!temp_path_.empty()) {
    if (::rename(temp_path_.c_str(), target_.c_str()) != 0) {
      fail(errno);
      discard();
      return false;
    }
    temp_path_.clear();
  }
  return true;
}

void AtomicOutput::discard() {
  close_file();
  if (!temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    temp_path_.clear();
  }
}

}  // namespace stepscope::report
