// `stepscope diff BEFORE AFTER`: load, analyse and diagnose two runs, then
// report what changed between them.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cli/messages.h"
#include "cli/output_file.h"
#include "cli/commands.h"
#include "diff/run_diff.h"
#include "pipeline/allocator_policy.h"
#include "pipeline/analyze_run.h"
#include "pipeline/diff_input.h"
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
};

// Loads one side and reports its problems on stderr; false when it cannot be read.
bool load_side(const char* side, const std::string& input, const pipeline::RunOptions& options,
               pipeline::AnalyzedRun& run, std::vector<std::string>& warnings) {
  run = pipeline::analyze_run({input}, options);
  if (!run.ok) {
    print_error(fmt::format("{}: {}", side, run.error));
    return false;
  }
  for (const auto& w : pipeline::warnings_to_show(run)) warnings.push_back(fmt::format("{}: {}", side, w));
  return true;
}

int run_diff(const DiffArgs& args) {
  // The output first: a path that cannot be written fails before both runs are read.
  report::AtomicOutput json_out;
  if (!open_output(args.json_path, json_out)) return 2;
  pipeline::RunOptions options;
  options.read.salvage = args.salvage;
  options.read.gzip = args.gzip == "zlib" ? trace::GzipBackend::kZlib : trace::GzipBackend::kIsal;
  options.threads = args.threads;
  options.diagnosis.disabled_detectors = args.disabled_detectors;

  report::DiffReport rep;
  rep.before_inputs = {args.before};
  rep.after_inputs = {args.after};
  rep.options.top_kernels = static_cast<size_t>(args.top);
  rep.options.kernel_mean_change_pct = args.mean_change_pct;
  rep.options.kernel_mean_change_us = args.mean_change_us;

  pipeline::AnalyzedRun before, after;
  // Both runs stay loaded for the comparison, read on the same threads.
  pipeline::choose_allocator_policy({args.before, args.after}, args.threads);
  options.tune_allocator = false;
  if (!load_side("before", args.before, options, before, rep.warnings)) return 2;
  if (!load_side("after", args.after, options, after, rep.warnings)) return 2;
  rep.result = diff::diff_runs(pipeline::run_input_of(before), pipeline::run_input_of(after), options.analysis,
                               rep.options);
  for (const auto& w : rep.warnings) print_warning(w);
  if (json_out.ok() && !finish_output(json_out, report::build_diff_json(rep).dump(1) + "\n")) return 2;
  if (!args.quiet && args.json_path != "-" && !write_stdout(report::render_diff_terminal(rep))) return 2;
  return 0;
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
  cmd->callback([args] { set_exit_code(run_diff(*args)); });
}

}  // namespace stepscope::cli
