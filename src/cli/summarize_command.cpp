// `stepscope summarize`: one rank's trace to a summary file, the per-rank half
// of `analyze` run where the trace is (docs/distributed.md).
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/gzip_option.h"
#include "cli/messages.h"
#include "cli/output_file.h"
#include "summary/summarize.h"
#include "summary/summary_file.h"
#include "trace/import_stats.h"

namespace stepscope::cli {

namespace {

struct SummarizeArgs {
  std::vector<std::string> inputs;
  std::string output;
  bool salvage = false;
  bool member_of_set = false;
  std::string gzip = "isal";
  int top = 10;
  size_t ranks_in_set = 0;
};

int run_summarize(const SummarizeArgs& args) {
  report::AtomicOutput out;
  if (!open_output(args.output, out)) return 2;
  summary::SummarizeOptions options;
  options.read.salvage = args.salvage;
  options.read.gzip = gzip_backend(args.gzip);
  options.analysis.top_kernels = args.top;
  options.member_of_set = args.member_of_set;
  options.ranks_in_set = args.ranks_in_set;
  summary::SummarizeResult r = summary::summarize_rank(args.inputs, options);
  if (!r.ok) {
    print_error(r.error);
    return 2;
  }
  for (const auto& w : r.summary.warnings) print_warning(w);
  if (std::string w = trace::import_warning(r.summary.analysis.origin.import); !w.empty())
    print_warning(r.summary.analysis.source_path + ": " + w);
  return finish_output(out, summary::encode_summary(r.summary)) ? 0 : 2;
}

}  // namespace

void register_summarize(CLI::App& app) {
  auto args = std::make_shared<SummarizeArgs>();
  auto* cmd = app.add_subcommand("summarize", "Analyse one rank's trace into a summary file for `stepscope merge`");
  cmd->add_option("inputs", args->inputs,
                  "the rank's trace file (or the files of one process's profiling windows, read as one rank)")
      ->required();
  cmd->add_option("-o,--output", args->output, "the summary file to write (*.stepscope-summary; '-' for stdout)")
      ->required();
  cmd->add_flag("--salvage", args->salvage, "as analyze --salvage (every rank of a merge must use the same)");
  cmd->add_flag("--member-of-set", args->member_of_set,
                "the file is one of a set: a file that is not a trace or has nothing analysable becomes a summary "
                "carrying analyze's note or warning, not an error");
  cmd->add_option("--gzip", args->gzip, "gzip decoder: isal (default) or zlib")->check(CLI::IsMember({"isal", "zlib"}));
  cmd->add_option("--top", args->top, "kernels listed per type (default 10; every rank of a merge must use the same)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--ranks-in-set", args->ranks_in_set,
                  "how many ranks the set has, for a trace that does not record its world size (the diagnosis "
                  "of its communication depends on it; default: not known, the rank is taken as alone)")
      ->check(CLI::Range(1, 1 << 30));
  cmd->callback([args] { set_exit_code(run_summarize(*args)); });
}

}  // namespace stepscope::cli
