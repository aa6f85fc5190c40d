// `stepscope memory SNAPSHOT [TRACE]`: read a PyTorch memory snapshot (the
// pickle of torch.cuda.memory._dump_snapshot()) and report peaks,
// fragmentation, live memory by allocation site, and the cause of each OOM;
// with a trace of the same run, the allocator's events by step and op.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/messages.h"
#include "cli/output_file.h"
#include "pipeline/memory_run.h"
#include "report/memory_html.h"
#include "report/memory_json.h"
#include "report/memory_terminal.h"

namespace stepscope::cli {
namespace {

struct MemoryArgs {
  std::string snapshot;
  std::string trace;
  std::string json_path;
  std::string html_path;
  int top = 10;
  bool quiet = false;
};

int run_memory(const MemoryArgs& args) {
  report::AtomicOutput json_out, html_out;
  if (!open_output(args.json_path, json_out) || !open_output(args.html_path, html_out)) return 2;
  // With a trace of the same run: its steps and ops for the history's events.
  const pipeline::MemoryRun run = pipeline::run_memory(args.snapshot, args.trace, static_cast<size_t>(args.top));
  if (!run.ok) {
    print_error(run.error);
    return 2;
  }
  const memory::MemoryReport& rep = run.report;
  for (const auto& w : rep.warnings)
    print_warning(fmt::format("{}: {} x{} (first at offset {})", args.snapshot, w.what, w.count, w.first_offset));
  if (json_out.ok() && !finish_output(json_out, report::build_memory_json(rep, run.findings).dump(1) + "\n")) return 2;
  if (html_out.ok() && !finish_output(html_out, report::render_memory_html(rep, run.findings))) return 2;
  if (!args.quiet && args.json_path != "-" && args.html_path != "-" &&
      !write_stdout(report::render_memory_terminal(rep, static_cast<size_t>(args.top), run.findings)))
    return 2;
  return 0;
}

}  // namespace

void register_memory(CLI::App& app) {
  auto args = std::make_shared<MemoryArgs>();
  auto* cmd = app.add_subcommand(
      "memory", "Read a PyTorch CUDA memory snapshot: peaks, fragmentation, live memory by allocation site, OOM causes");
  cmd->add_option("snapshot", args->snapshot,
                  "the pickle of torch.cuda.memory._dump_snapshot() (gzip-compressed is fine)")
      ->required();
  cmd->add_option("trace", args->trace,
                  "a PyTorch profiler trace of the same run (one rank; profile_memory=True aligns the clocks): each "
                  "allocation put in its step and op");
  cmd->add_option("--json", args->json_path, "write the JSON report to FILE ('-' for stdout)");
  cmd->add_option("--html", args->html_path,
                  "write a self-contained HTML page to FILE: memory by allocation site over time, the peak, each OOM");
  cmd->add_option("--top", args->top, "allocation sites listed per state (default 10)")->check(CLI::Range(1, 100000));
  cmd->add_flag("-q,--quiet", args->quiet, "no terminal report");
  cmd->callback([args] { set_exit_code(run_memory(*args)); });
}

}  // namespace stepscope::cli
