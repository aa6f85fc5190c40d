// `stepscope merge`: the report of a trace set from its ranks' summaries.
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/messages.h"
#include "cli/output_file.h"
#include "pipeline/analyze_run.h"
#include "pipeline/merge_run.h"
#include "report/html_report.h"
#include "report/json_report.h"
#include "report/terminal_report.h"

namespace stepscope::cli {

namespace {

struct MergeArgs {
  std::vector<std::string> inputs;
  std::string json_path;
  std::string html_path;
  unsigned threads = 0;
  bool quiet = false;
  bool details = false;
};

int run_merge(const MergeArgs& args) {
  report::AtomicOutput json_out, html_out;
  if (!open_output(args.json_path, json_out) || !open_output(args.html_path, html_out)) return 2;
  pipeline::MergedRun m = pipeline::merge_summary_files(args.inputs, args.threads);
  if (!m.ok) {
    print_error(m.error);
    return 2;
  }
  for (const auto& w : pipeline::warnings_to_show(m.report)) print_warning(w);
  if (json_out.ok() && !write_json_report(m.report, json_out)) return 2;
  if (html_out.ok() && !finish_output(html_out, report::render_html(m.report))) return 2;
  if (!args.quiet && args.json_path != "-") {
    report::TerminalOptions to;
    to.top_kernels = static_cast<size_t>(m.settings.analysis.top_kernels);
    to.details = args.details;
    if (!write_stdout(report::render_terminal(m.report, to))) return 2;
  }
  return 0;
}

}  // namespace

void register_merge(CLI::App& app) {
  auto args = std::make_shared<MergeArgs>();
  auto* cmd = app.add_subcommand(
      "merge", "Report on a trace set from its ranks' summaries (stepscope summarize): the analyses and cross-rank "
               "tables and the diagnosis of analyze, less what needs every rank's step graph (combined saving, "
               "load_imbalance's replay, job replay)");
  cmd->add_option("inputs", args->inputs, "summary files, folders (their *.stepscope-summary files) or globs")
      ->required();
  cmd->add_option("--json", args->json_path, "write the JSON report to FILE ('-' for stdout)");
  cmd->add_option("--html", args->html_path, "write a self-contained HTML report to FILE");
  cmd->add_option("--threads", args->threads, "summaries read in parallel (default: cores)");
  cmd->add_flag("-q,--quiet", args->quiet, "no terminal report");
  cmd->add_flag("--details", args->details, "add the statistics tables to the terminal report");
  cmd->callback([args] { set_exit_code(run_merge(*args)); });
}

}  // namespace stepscope::cli
