// stepscope: one binary, one subcommand per file; main only dispatches.
#include <CLI/CLI.hpp>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli/commands.h"
#include "trace/trace_reader.h"

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  // Trace stores are large columns that are sorted through temporary copies
  // and then freed. By default glibc raises its mmap threshold to the size of
  // the first freed block, so later temporaries come from the heap and stay
  // resident once freed; a fixed threshold hands them back to the system
  // (about 12% less peak RSS on the 8-rank 1 GB set, docs/performance.md).
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(stepscope::trace::kOwnMappingBytes));
#endif
  CLI::App app{"stepscope: find and size the hidden bottlenecks of GPU training from profiler traces"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "stepscope 0.1.0");
  stepscope::cli::register_analyze(app);
  stepscope::cli::register_diff(app);
  stepscope::cli::register_bench(app);
  CLI::App* plan = stepscope::cli::register_plan(app);
  stepscope::cli::register_plan_search(plan);
  stepscope::cli::register_plan_advice(plan);
  stepscope::cli::register_monitor(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return stepscope::cli::exit_code();
}
