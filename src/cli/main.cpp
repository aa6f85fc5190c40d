// stepscope: one binary, one subcommand per file; main only dispatches.
#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) {
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
