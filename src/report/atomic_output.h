// An output file that appears whole or not at all. The text goes to a
// temporary file beside the target (same folder, so the final rename stays on
// one file system) and is renamed into place only when every byte was
// written, flushed and closed; on any failure, or when the output is dropped
// unfinished, the temporary file is removed. A full disk or a file-size limit
// therefore never leaves a half-written report behind.
//
// Opening creates the temporary file, so the CLI opens its outputs before it
// reads any trace: a missing or read-only folder fails in milliseconds.
//
// "-" is stdout, and a target that exists but is not a regular file (a FIFO,
// /dev/null, a process substitution's /dev/fd/N) is written in place: those
// cannot be renamed over. A symbolic link to a file is followed, so the link
// stays and its target is replaced.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace stepscope::report {

class AtomicOutput {
 public:
  AtomicOutput() = default;  // no output: ok() is false, error() is empty
  // Opens `path` for writing; check ok(), else error() is one line naming it.
  static AtomicOutput open(const std::string& path);

  AtomicOutput(AtomicOutput&& other) noexcept;
  AtomicOutput& operator=(AtomicOutput&& other) noexcept;
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;
  ~AtomicOutput();  // discard() unless committed

  bool ok() const { return file_ != nullptr && error_.empty(); }
  const std::string& error() const { return error_; }  // "<path>: cannot write: <reason>"
  const std::string& reason() const { return reason_; }  // "<reason>" alone (e.g. "No space left on device")
  const std::string& path() const { return path_; }
  bool is_stdout() const { return path_ == "-"; }

  // Appends `bytes`; the first failure is kept in error() and later writes do nothing.
  bool write(std::string_view bytes);
  // Flushes, closes and renames the temporary file onto the target. False
  // (the temporary file removed, error() set) when anything failed.
  bool commit();
  // Closes and removes the temporary file; the target is left as it was.
  void discard();

 private:
  void fail(int err);
  void close_file();

  std::string path_;       // as the user named it (for messages)
  std::string target_;     // where the file lands (a symbolic link resolved)
  std::string temp_path_;  // empty when written in place
  std::string error_;
  std::string reason_;
  FILE* file_ = nullptr;
  bool owns_file_ = false;  // false for stdout
};

}  // namespace stepscope::report
