#include "cli/messages.h"

#include <fmt/core.h>

#include <cstdio>
#include <cstring>

#include "report/printable_text.h"

namespace stepscope::cli {

void print_error(std::string_view message) {
  fmt::print(stderr, "stepscope: error: {}\n", report::printable_text(message));
}

void print_warning(std::string_view message) {
  fmt::print(stderr, "stepscope: warning: {}\n", report::printable_text(message));
}

void print_wrote(std::string_view path) {
  fmt::print(stderr, "stepscope: wrote {}\n", report::printable_text(path));
}

void print_verdict(std::string_view line) {
  fmt::print(stderr, "stepscope: verdict: {}\n", report::printable_text(line));
}

std::string stdout_error(int err) {
  return std::string("standard output: cannot write: ") + (err ? std::strerror(err) : "write error");
}

}  // namespace stepscope::cli
