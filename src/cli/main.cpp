// stepscope: one binary, one subcommand per file; main only dispatches, and
// is the last line of defence: no exception ends the process with an abort,
// and a report that did not reach stdout is an error, not exit 0.
#include <CLI/CLI.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <string>

#include "cli/commands.h"
#include "cli/messages.h"

namespace {

// Everything written to stdout must have arrived: flushes it and turns a
// failure (a full disk, /dev/full) into one error line and exit 2, whichever
// subcommand wrote. A code of 2 or more already reported its own error.
int finish_stdout(int code) {
  std::cout.flush();
  errno = 0;
  const bool flush_failed = std::fflush(stdout) != 0;
  const int err = errno;
  if (!flush_failed && !std::ferror(stdout) && std::cout.good()) return code;
  if (code >= 2) return code;
  stepscope::cli::print_error(stepscope::cli::stdout_error(flush_failed ? err : 0));
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // A file-size limit (ulimit -f) makes a write fail with EFBIG, reported as
  // an error naming the file, instead of killing the process with SIGXFSZ.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"stepscope: find and size the hidden bottlenecks of GPU training from profiler traces"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "stepscope 0.1.0");
  int code = 0;
  try {
    stepscope::cli::register_analyze(app);
    stepscope::cli::register_diff(app);
    stepscope::cli::register_summarize(app);
    stepscope::cli::register_merge(app);
    stepscope::cli::register_memory(app);
    stepscope::cli::register_bench(app);
    CLI::App* plan = stepscope::cli::register_plan(app);
    stepscope::cli::register_plan_search(plan);
    stepscope::cli::register_plan_advice(plan);
    stepscope::cli::register_monitor(app);
    try {
      app.parse(argc, argv);
      code = stepscope::cli::exit_code();
    } catch (const CLI::ParseError& e) {
      // --help and --version print as CLI11 does; a bad option or value is
      // one error line and exit 2, like every other bad input.
      if (e.get_exit_code() == 0) {
        code = app.exit(e);
      } else {
        stepscope::cli::print_error(e.what());
        code = 2;
      }
    }
  } catch (const std::bad_alloc&) {
    // Readers report their own limits; this is for what got past them.
    stepscope::cli::print_error("out of memory (std::bad_alloc)");
    code = 2;
  } catch (const std::exception& e) {
    stepscope::cli::print_error(std::string("internal error: ") + e.what());
    code = 2;
  } catch (...) {
    stepscope::cli::print_error("internal error: unknown exception");
    code = 2;
  }
  return finish_stdout(code);
}
