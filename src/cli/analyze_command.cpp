// `stepscope analyze`: read rank traces, run the analyses, write reports.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <chrono>

#include "cli/commands.h"
#include "trace/trace_set.h"

namespace stepscope::cli {

namespace {
struct AnalyzeArgs {
  std::vector<std::string> inputs;
  bool salvage = false;
  std::string gzip = "isal";
};
}  // namespace

void register_analyze(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  auto* cmd = app.add_subcommand("analyze", "Attribute step time and find bottlenecks in profiler traces");
  cmd->add_option("inputs", args->inputs, "trace files, folders or globs (one file per rank)")->required();
  cmd->add_flag("--salvage", args->salvage, "analyse what was read from damaged files instead of failing");
  cmd->add_option("--gzip", args->gzip, "gzip decoder: isal (default) or zlib")->check(CLI::IsMember({"isal", "zlib"}));
  cmd->callback([args] {
    trace::ReadOptions ro;
    ro.salvage = args->salvage;
    ro.gzip = args->gzip == "zlib" ? trace::GzipBackend::kZlib : trace::GzipBackend::kIsal;
    auto t0 = std::chrono::steady_clock::now();
    trace::LoadResult loaded = trace::load_traces(args->inputs, ro);
    auto t1 = std::chrono::steady_clock::now();
    if (!loaded.ok) {
      fmt::print(stderr, "stepscope: error: {}\n", loaded.error);
      set_exit_code(2);
      return;
    }
    for (const auto& n : loaded.set.notes) fmt::print(stderr, "stepscope: note: {}\n", n);
    for (const auto& w : loaded.set.warnings) fmt::print(stderr, "stepscope: warning: {}\n", w);
    for (const auto& r : loaded.set.ranks) {
      fmt::print("rank {} ({}): {} events, {} gpu, {} flows, {} skipped\n", r->rank, r->rank_source,
                 r->events.size(), r->gpu_rows.size(), r->flows.size(), r->stats.skipped_records());
      for (const auto& e : r->stats.log())
        fmt::print("  {} at byte {}: {}\n", trace::counter_info(e.counter).name, e.byte_offset, e.message);
    }
    double s = std::chrono::duration<double>(t1 - t0).count();
    fmt::print("read {:.1f} MB in {:.3f} s\n", loaded.set.uncompressed_bytes / 1e6, s);
  });
}

}  // namespace stepscope::cli
