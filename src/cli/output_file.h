// Where a subcommand's outputs go: --json, --html, --perfetto, -o FILE, or
// stdout for "-" (the same meaning everywhere). A file output is opened when
// the subcommand starts, before it reads or computes anything: opening
// creates the temporary file beside the target, so a missing or read-only
// folder fails in milliseconds with one line naming the path. The file is
// renamed into place only when written completely (report/atomic_output.h).
#pragma once

#include <string>
#include <string_view>

#include "report/analyze_report.h"
#include "report/atomic_output.h"

namespace stepscope::cli {

// Opens `path` into `out` unless `path` is empty (no such output). False,
// with "stepscope: error: <path>: cannot write: <reason>" on stderr, when it
// cannot be opened ("cannot write <what>: <reason>" when `what` is given).
bool open_output(const std::string& path, report::AtomicOutput& out, std::string_view what = {});

// Writes `text` to an opened output and puts it in place, naming the file
// on stderr ("stepscope: wrote PATH"; not for stdout). False, with one error
// line on stderr and no file left behind, when that fails.
bool finish_output(report::AtomicOutput& out, std::string_view text);

// Writes `text` to stdout and flushes it. False, with one error line on
// stderr, when stdout cannot take it (a full disk, /dev/full, a closed pipe).
bool write_stdout(std::string_view text);

// Opens, writes and puts `path` in place at once ("-" = stdout); false when
// it could not be written (nothing printed: the caller says what failed).
bool write_output(const std::string& path, const std::string& text);

// Writes the analyze report's JSON (indent 1, then a newline) to an opened
// output a rank at a time and puts it in place, as finish_output does.
bool write_json_report(const report::AnalyzeReport& report, report::AtomicOutput& out);

}  // namespace stepscope::cli
