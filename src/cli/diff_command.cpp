// `stepscope diff BEFORE AFTER`: load, analyse and diagnose two runs, then
// report what changed between them.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cli/messages.h"
#include "cli/output_file.h"
#include "cli/commands.h"
#include "cli/gzip_option.h"
#include "pipeline/diff_run.h"
#include "report/diff_json.h"
#include "report/diff_report.h"

namespace stepscope::cli {

namespace {

struct DiffArgs {
  std::string before;
  std::string after;
  bool salvage = false;
  std::string gzip = "isal";
  std::string json_path;
  int top = 10;
  double mean_change_pct = 5.0;
  double mean_change_us = 1.0;
  unsigned threads = 0;
  bool quiet = false;
  std::vector<std::string> disabled_detectors;
  std::vector<std::string> fail_if;
};

int run_diff(const DiffArgs& args) {
  // The output first: a path that cannot be written fails before both runs are read.
  report::AtomicOutput json_out;
  if (!open_output(args.json_path, json_out)) return 2;
  pipeline::RunOptions options;
  options.read.salvage = args.salvage;
  options.read.gzip = gzip_backend(args.gzip);
  options.threads = args.threads;
  options.diagnosis.disabled_detectors = args.disabled_detectors;
  diff::DiffOptions diff_options;
  diff_options.top_kernels = static_cast<size_t>(args.top);
  diff_options.kernel_mean_change_pct = args.mean_change_pct;
  diff_options.kernel_mean_change_us = args.mean_change_us;

  pipeline::DiffedRuns runs = pipeline::diff_run({args.before}, {args.after}, options, diff_options, args.fail_if);
  if (!runs.ok) {
    print_error(runs.error);
    return 2;
  }
  const report::DiffReport& rep = runs.report;
  for (const auto& w : rep.warnings) print_warning(w);
  if (json_out.ok() && !finish_output(json_out, report::build_diff_json(rep).dump(1) + "\n")) return 2;
  if (!args.quiet && args.json_path != "-" && !write_stdout(report::render_diff_terminal(rep))) return 2;
  if (!rep.gate) return 0;
  // The gate's verdict: one line on stderr, exit 1 when a condition holds (2 stays "could not run").
  print_verdict(rep.gate->line);
  return rep.gate->failed ? 1 : 0;
}

}  // namespace

void register_diff(CLI::App& app) {
  auto args = std::make_shared<DiffArgs>();
  auto* cmd = app.add_subcommand("diff", "Compare two runs: step time, attribution, findings and kernels before -> after");
  cmd->add_option("before", args->before, "the run before the change: trace file, folder or glob (one file per rank)")
      ->required();
  cmd->add_option("after", args->after, "the run after the change: trace file, folder or glob")->required();
  cmd->add_option("--json", args->json_path, "write the JSON diff to FILE ('-' for stdout)");
  cmd->add_option("--top", args->top, "kernels listed per kind of change (default 10)")->check(CLI::Range(1, 100000));
  cmd->add_option("--min-mean-change-pct", args->mean_change_pct,
                  "a kernel is slower/faster when its mean changes by more than this % (default 5)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--min-mean-change-us", args->mean_change_us,
                  "... and by more than this many µs (default 1)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--salvage", args->salvage, "compare what can be read from damaged files instead of failing (events before a cut; past a damaged record, the next whole ones)");
  cmd->add_option("--gzip", args->gzip, "gzip decoder: isal (default) or zlib")->check(CLI::IsMember({"isal", "zlib"}));
  cmd->add_option("--threads", args->threads, "ranks read and analysed in parallel (default: cores)");
  cmd->add_flag("-q,--quiet", args->quiet, "no terminal report");
  cmd->add_option("--disable-detector", args->disabled_detectors,
                  "skip a detector by name on both sides (repeatable)");
  cmd->add_option("--fail-if", args->fail_if,
                  "a CI gate: exit 1 with a one-line verdict when CONDITION holds, e.g. 'step_time>+5%', "
                  "'host_overhead>+1ms', 'effective_compute<-5pp', 'new_finding>=medium' (repeatable; docs/ci_gate.md)");
  cmd->callback([args] { set_exit_code(run_diff(*args)); });
}

}  // namespace stepscope::cli
