#include "cli/output_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "cli/messages.h"
#include "report/json_report.h"

namespace stepscope::cli {

bool open_output(const std::string& path, report::AtomicOutput& out, std::string_view what) {
  if (path.empty()) return true;
  out = report::AtomicOutput::open(path);
  if (out.ok()) return true;
  print_error(what.empty() ? out.error() : path + ": cannot write " + std::string(what) + ": " + out.reason());
  return false;
}

bool finish_output(report::AtomicOutput& out, std::string_view text) {
  const bool to_file = !out.is_stdout();
  const std::string path = out.path();
  if (!out.write(text) || !out.commit()) {
    print_error(out.error());
    return false;
  }
  if (to_file) print_wrote(path);
  return true;
}

bool write_stdout(std::string_view text) {
  std::cout.flush();  // anything written through std::cout goes first
  errno = 0;
  const bool wrote = std::fwrite(text.data(), 1, text.size(), stdout) == text.size();
  int err = errno;
  if (wrote) {
    errno = 0;
    if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return true;
    err = errno;
  }
  print_error(stdout_error(err));
  return false;
}

bool write_output(const std::string& path, const std::string& text) {
  report::AtomicOutput out = report::AtomicOutput::open(path);
  return out.write(text) && out.commit();
}

bool write_json_report(const report::AnalyzeReport& report, report::AtomicOutput& out) {
  // A refused piece leaves the error in `out`; finish_output then reports it
  // and removes the temporary file.
  report::write_analyze_json(report, 1, [&](std::string_view piece) { return out.write(piece); });
  return finish_output(out, "\n");
}

}  // namespace stepscope::cli
