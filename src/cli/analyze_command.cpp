// `stepscope analyze`: parse the arguments, run the pipeline, write reports.
#include <unistd.h>

#include <cstdlib>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cli/commands.h"
#include "cli/gzip_option.h"
#include "cli/messages.h"
#include "cli/output_file.h"
#include "diagnose/finding.h"
#include "pipeline/analyze_run.h"
#include "report/html_report.h"
#include "report/json_report.h"
#include "report/perfetto_report.h"
#include "report/terminal_report.h"

namespace stepscope::cli {

namespace {

struct AnalyzeArgs {
  std::vector<std::string> inputs;
  bool salvage = false;
  std::string gzip = "isal";
  std::string json_path;
  std::string compat;
  int top = 10;
  unsigned threads = 0;
  bool quiet = false;
  std::vector<std::string> disabled_detectors;
  std::optional<double> unprofiled_step_ms;
  bool no_replay = false;
  std::vector<std::string> what_if;
  std::string html_path;
  std::string perfetto_path;
  std::string profile_path;
  std::vector<std::string> memory_snapshots;
  bool details = false;
  std::string color = "auto";
  std::string dask;
};

// Colour for a terminal, unless NO_COLOR is set (https://no-color.org: any
// non-empty value) or the user said otherwise.
bool use_color(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(STDOUT_FILENO) && (no_color == nullptr || *no_color == '\0');
}

int run_analyze(const AnalyzeArgs& args) {
  if (!args.dask.empty()) {
    // The Dask client is Python's: the wheel's `stepscope` command runs this form itself.
    print_error("--dask runs through the Python package: the `stepscope` command that `pip install stepscope` "
                "installs (`pip install 'stepscope[dask]'`), or `python -m stepscope._cli analyze --dask ...`; this binary "
                "reads the traces itself (docs/distributed.md)");
    return 2;
  }
  // Outputs first: a path that cannot be written fails before minutes of reading.
  report::AtomicOutput json_out, html_out, perfetto_out;
  if (!open_output(args.json_path, json_out) || !open_output(args.html_path, html_out) ||
      !open_output(args.perfetto_path, perfetto_out))
    return 2;
  pipeline::RunOptions options;
  options.read.salvage = args.salvage;
  options.read.gzip = gzip_backend(args.gzip);
  options.threads = args.threads;
  options.analysis.top_kernels = args.top;
  options.compat = args.compat;
  options.hardware_profile_path = args.profile_path;
  options.diagnosis.disabled_detectors = args.disabled_detectors;
  options.diagnosis.unprofiled_step_ms = args.unprofiled_step_ms;
  options.diagnosis.replay = !args.no_replay;
  options.diagnosis.what_if = args.what_if;
  options.memory_snapshots = args.memory_snapshots;
  pipeline::AnalyzedRun run = pipeline::analyze_run(args.inputs, options);
  if (!run.ok) {
    print_error(run.error);
    return 2;
  }
  const report::AnalyzeReport& rep = run.report;
  for (const auto& w : pipeline::warnings_to_show(run)) print_warning(w);
  if (json_out.ok() && !write_json_report(rep, json_out)) return 2;
  if (html_out.ok() && !finish_output(html_out, report::render_html(rep))) return 2;
  if (perfetto_out.ok()) {
    const std::string path = perfetto_out.path();
    report::PerfettoResult pr = report::write_perfetto(rep, std::move(perfetto_out));
    if (!pr.ok) {
      print_error(pr.error);
      return 2;
    }
    print_wrote(path);
  }
  if (!args.quiet && args.json_path != "-") {
    report::TerminalOptions to;
    to.top_kernels = static_cast<size_t>(args.top);
    to.details = args.details;
    to.color = use_color(args.color);
    if (!write_stdout(report::render_terminal(rep, to))) return 2;
  }
  return 0;
}

}  // namespace

void register_analyze(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  auto* cmd = app.add_subcommand("analyze", "Attribute GPU step time and find bottlenecks in profiler traces");
  cmd->add_option("inputs", args->inputs, "trace files, folders or globs (one file per rank; .json or .json.gz)")
      ->required();
  cmd->add_option("--json", args->json_path, "write the JSON report to FILE ('-' for stdout)");
  cmd->add_option("--compat", args->compat,
                  "reproduce another tool's numbers: 'hta' (HTA 0.6.1, = 'hta-0.6.1') or 'hta-0.5.0' (the PyPI release)")
      ->check(CLI::IsMember({"hta", "hta-0.6.1", "hta-0.5.0"}));
  cmd->add_flag("--salvage", args->salvage, "analyse what can be read from damaged files instead of failing (events before a cut; past a damaged record, the next whole ones)");
  cmd->add_option("--gzip", args->gzip, "gzip decoder: isal (default) or zlib")->check(CLI::IsMember({"isal", "zlib"}));
  cmd->add_option("--top", args->top, "kernels listed per type (default 10)")->check(CLI::Range(1, 100000));
  cmd->add_option("--threads", args->threads, "ranks read and analysed in parallel (default: cores)");
  cmd->add_option("--html", args->html_path, "write a self-contained HTML report to FILE");
  cmd->add_option("--perfetto", args->perfetto_path,
                  "write the trace with the findings as a Chrome JSON trace for ui.perfetto.dev to FILE (.gz: gzip)");
  cmd->add_flag("-q,--quiet", args->quiet, "no terminal report");
  cmd->add_flag("--details", args->details,
                "add the statistics tables (GPU time, steps, kernels, idle per stream, launches, copies, allocator, "
                "ranks) to the terminal report");
  cmd->add_option("--color", args->color, "colour the terminal report: auto (a terminal, unless NO_COLOR is set), "
                                          "always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->add_option("--profile", args->profile_path,
                  "hardware profile from `stepscope bench`: compare with its measured ceilings, not datasheet peaks");
  cmd->add_option("--disable-detector", args->disabled_detectors, "skip a detector by name (repeatable)");
  cmd->add_option("--unprofiled-step-ms", args->unprofiled_step_ms,
                  "the run's mean step measured without the profiler, ms: the profiler-cost model is calibrated to it "
                  "(overrides the trace's stepscope_unprofiled_step_ms)")
      ->check(CLI::Range(1e-6, 1e9));
  cmd->add_option("--what-if", args->what_if,
                  "finding categories to fix together, comma-separated (e.g. host_overhead,unfused_optimizer): their "
                  "remedies are replayed at once without the profiler")
      ->delimiter(',')
      ->check(CLI::Validator(
          [](std::string& name) {
            return diagnose::category_from_string(name) ? std::string()
                                                         : "unknown finding category '" + name + "' (docs/findings.md)";
          },
          "CATEGORY"));
  cmd->add_option("--memory-snapshot", args->memory_snapshots,
                  "[RANK=]FILE: a memory snapshot of the run (torch.cuda.memory._dump_snapshot()); its fragmentation "
                  "and OOM findings join the diagnosis (RANK= names the rank when several were read; repeatable)");
  cmd->add_option("--dask", args->dask,
                  "ADDRESS: summarize the ranks on the workers of this Dask scheduler and merge them (the Python "
                  "package's `stepscope` command; docs/distributed.md)");
  cmd->add_flag("--no-replay", args->no_replay,
                "skip the what-if replay (run without the profiler, replay savings, critical paths): savings are the "
                "detectors' bounds");
  cmd->callback([args] { set_exit_code(run_analyze(*args)); });
}

}  // namespace stepscope::cli
