// `stepscope analyze`: read rank traces, run the analyses, write reports.
#include <optional>
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <chrono>

#include "cli/allocator_policy.h"
#include "cli/messages.h"
#include "cli/output_file.h"
#include "analysis/hta_compat/run_hta_compat.h"
#include "analysis/multi_rank.h"
#include "diagnose/diagnose.h"
#include "diagnose/hardware_table.h"
#include "hwbench/profile_ceilings.h"
#include "hwbench/profile_json.h"
#include "pipeline/load_run.h"
#include "analysis/rank_analysis.h"
#include "cli/commands.h"
#include "report/html_report.h"
#include "report/json_report.h"
#include "report/perfetto_report.h"
#include "report/terminal_report.h"
#include "trace/trace_set.h"

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
};

int run_analyze(const AnalyzeArgs& args) {
  using clock = std::chrono::steady_clock;
  // Outputs first: a path that cannot be written fails before minutes of reading.
  report::AtomicOutput json_out, html_out, perfetto_out;
  if (!open_output(args.json_path, json_out) || !open_output(args.html_path, html_out) ||
      !open_output(args.perfetto_path, perfetto_out))
    return 2;
  // A hardware profile (stepscope bench): its measured ceilings replace the
  // datasheet peaks for every rank. Read first: a bad profile fails fast.
  std::optional<hwbench::HardwareProfile> profile;
  std::optional<diagnose::GpuPeaks> ceilings;
  if (!args.profile_path.empty()) {
    std::string error;
    profile = hwbench::read_profile_file(args.profile_path, error);
    if (profile) ceilings = hwbench::measured_peaks(*profile, error);
    if (!ceilings) {
      print_error(profile ? args.profile_path + ": " + error : error);
      return 2;
    }
  }
  trace::ReadOptions ro;
  ro.salvage = args.salvage;
  ro.gzip = args.gzip == "zlib" ? trace::GzipBackend::kZlib : trace::GzipBackend::kIsal;
  choose_allocator_policy(args.inputs, args.threads);
  auto t0 = clock::now();
  trace::LoadResult loaded = trace::load_traces(args.inputs, ro, args.threads);
  auto t1 = clock::now();
  if (!loaded.ok) {
    print_error(loaded.error);
    return 2;
  }
  report::AnalyzeReport rep;
  rep.mode = args.compat.empty() ? "exact" : args.compat;
  rep.inputs = args.inputs;
  rep.notes = loaded.set.notes;
  rep.warnings = loaded.set.warnings;
  rep.uncompressed_bytes = loaded.set.uncompressed_bytes;
  rep.file_bytes = loaded.set.file_bytes;
  rep.read_seconds = std::chrono::duration<double>(t1 - t0).count();

  analysis::AnalysisOptions options;
  options.top_kernels = args.top;
  for (const auto& s : loaded.set.ranks) rep.stores.push_back(s.get());
  // Ranks are independent: analyse them on the same threads that read them.
  rep.ranks = pipeline::analyze_ranks_parallel(rep.stores, options, args.threads);
  pipeline::SalvageCheck salvage = pipeline::check_salvaged_steps(rep.ranks);
  if (!salvage.error.empty()) {
    fmt::print(stderr, "stepscope: error: {}\n", salvage.error);
    return 2;
  }
  for (auto& w : salvage.warnings) rep.warnings.push_back(std::move(w));
  if (rep.ranks.size() >= 2) {
    std::vector<const analysis::RankAnalysis*> ptrs;
    for (const auto& r : rep.ranks) ptrs.push_back(&r);
    rep.multi = analysis::analyze_ranks(ptrs, options);
    for (const auto& w : rep.multi.warnings) rep.warnings.push_back(w);
  }
  if (auto release = analysis::hta::release_of_compat_mode(args.compat)) {
    rep.hta = analysis::hta::run_hta_compat(rep.stores, *release);
    if (rep.stores.size() == 1) {
      rep.hta_rank_kernel_types.push_back(rep.hta->kernel_type_breakdown);
    } else {
      for (const auto* s : rep.stores)
        rep.hta_rank_kernel_types.push_back(analysis::hta::run_hta_compat(*s, *release).kernel_type_breakdown);
    }
  }
  diagnose::DiagnoseOptions dopt;
  dopt.disabled_detectors = args.disabled_detectors;
  dopt.unprofiled_step_ms = args.unprofiled_step_ms;
  dopt.replay = !args.no_replay;
  dopt.what_if = args.what_if;
  if (ceilings) {
    dopt.peaks_override = &*ceilings;
    // A profile of another GPU model would judge this trace against the
    // wrong ceilings: it is still used (the user asked for it), but said.
    const diagnose::GpuPeaks* profiled = diagnose::find_gpu_peaks(ceilings->model);
    for (const auto* s : rep.stores) {
      const diagnose::GpuPeaks* traced = diagnose::find_gpu_peaks(*s);
      if (traced && traced != profiled)
        rep.warnings.push_back(fmt::format("{}: the trace ran on {}, but --profile {} measured {}: its ceilings are used",
                                           s->source_path, traced->model, args.profile_path, ceilings->model));
    }
  }
  rep.diagnosis = diagnose::diagnose(rep.stores, rep.ranks, rep.multi, dopt);
  rep.analysis_seconds = std::chrono::duration<double>(clock::now() - t1).count();

  for (const auto& w : rep.warnings) print_warning(w);
  for (const auto& r : rep.stores)
    if (std::string w = trace::import_warning(r->stats); !w.empty()) print_warning(r->source_path + ": " + w);
  if (json_out.ok() && !finish_output(json_out, report::build_analyze_json(rep).dump(1) + "\n")) return 2;
  if (html_out.ok() && !finish_output(html_out, report::render_html(rep))) return 2;
  if (perfetto_out.ok()) {
    report::PerfettoResult pr = report::write_perfetto(rep, std::move(perfetto_out));
    if (!pr.ok) {
      print_error(pr.error);
      return 2;
    }
  }
  if (!args.quiet && args.json_path != "-") {
    report::TerminalOptions to;
    to.top_kernels = static_cast<size_t>(args.top);
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
  cmd->add_flag("--no-replay", args->no_replay,
                "skip the what-if replay (run without the profiler, replay savings, critical paths): savings are the "
                "detectors' bounds");
  cmd->callback([args] { set_exit_code(run_analyze(*args)); });
}

}  // namespace stepscope::cli
