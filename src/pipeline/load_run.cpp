#include "pipeline/load_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <system_error>
#include <thread>

#include <fmt/core.h>

namespace stepscope::pipeline {

std::vector<analysis::RankAnalysis> analyze_ranks_parallel(const std::vector<const trace::EventStore*>& stores,
                                                           const analysis::AnalysisOptions& options,
                                                           unsigned threads) {
  std::vector<analysis::RankAnalysis> out(stores.size());
  // Ranks are independent: one worker per rank up to the thread count.
  const unsigned n = trace::reading_threads(threads);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < stores.size(); i = next++) out[i] = analysis::analyze_rank(*stores[i], options);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<size_t>(n, stores.size()); ++t) {
    // A thread that cannot be started (address-space or process limits)
    // leaves its ranks to the others: slower, not a failure (as reading).
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;
    }
  }
  work();
  for (auto& t : pool) t.join();
  return out;
}

SalvageCheck check_salvaged_steps(const std::vector<analysis::RankAnalysis>& ranks) {
  SalvageCheck out;
  for (const analysis::RankAnalysis& r : ranks) {
    const analysis::StepsResult& s = r.steps;
    if (s.cut_section == "none") continue;
    // A trace without ProfilerStep annotations has no per-step figure to
    // protect: what was read is analysed as before (docs/architecture.md).
    if (s.cut_touches_steps && s.dropped_by_cut > 0) {
      if (out.error.empty())
        out.error = fmt::format(
            "{}: the file is cut {}: any step may have lost records, so all {} steps are dropped and nothing "
            "whole remains to analyse (docs/robustness.md, \"Salvaged steps\")",
            r.source_path,
            s.cut_section == "host" ? "before its device records (kernels, copies, runtime calls)"
                                    : "inside its device records, which Kineto writes buffer by buffer, not in time order",
            s.dropped_by_cut);
      continue;
    }
    if (s.cut_section == "after_device")
      out.warnings.push_back(fmt::format("{}: the file is cut after its device records: 0 steps dropped, {} whole",
                                         r.source_path, s.steps.size()));
  }
  return out;
}

LoadedRun load_run(const std::vector<std::string>& inputs, const RunOptions& options) {
  using clock = std::chrono::steady_clock;
  LoadedRun run;
  auto t0 = clock::now();
  trace::LoadResult loaded = trace::load_traces(inputs, options.read, options.threads);
  auto t1 = clock::now();
  run.read_seconds = std::chrono::duration<double>(t1 - t0).count();
  if (!loaded.ok) {
    run.error = std::move(loaded.error);
    return run;
  }
  run.set = std::move(loaded.set);
  for (const auto& s : run.set.ranks) run.stores.push_back(s.get());
  run.ranks = analyze_ranks_parallel(run.stores, options.analysis, options.threads);
  SalvageCheck salvage = check_salvaged_steps(run.ranks);
  if (!salvage.error.empty()) {
    run.error = std::move(salvage.error);
    return run;
  }
  for (auto& w : salvage.warnings) run.set.warnings.push_back(std::move(w));
  if (run.ranks.size() >= 2) {
    std::vector<const analysis::RankAnalysis*> ptrs;
    for (const auto& r : run.ranks) ptrs.push_back(&r);
    run.multi = analysis::analyze_ranks(ptrs, options.analysis);
    for (const auto& w : run.multi.warnings) run.set.warnings.push_back(w);
  }
  auto t2 = clock::now();
  run.analysis_seconds = std::chrono::duration<double>(t2 - t1).count();
  if (options.diagnose) {
    diagnose::DiagnoseOptions d = options.diagnosis;
    d.analysis = options.analysis;
    run.diagnosis = diagnose::diagnose(run.stores, run.ranks, run.multi, d);
    run.diagnose_seconds = std::chrono::duration<double>(clock::now() - t2).count();
  }
  run.ok = true;
  return run;
}

}  // namespace stepscope::pipeline
