// The CLI's stderr lines: "stepscope: error: ..." and "stepscope: warning:
// ...", one line each. Messages name files, fields and events whose text
// came from the user or a trace, so every line goes through
// report::printable_text: a newline in a file name or an ESC in a kernel name
// cannot split the line or drive the terminal.
#pragma once

#include <string>
#include <string_view>

namespace stepscope::cli {

void print_error(std::string_view message);
void print_warning(std::string_view message);
// "stepscope: wrote PATH": every file a command writes is named.
void print_wrote(std::string_view path);
// "stepscope: verdict: ..." : the one line of a CI gate (diff --fail-if).
void print_verdict(std::string_view line);

// "standard output: cannot write: <reason>" for an errno (0: "write error").
std::string stdout_error(int err);

}  // namespace stepscope::cli
