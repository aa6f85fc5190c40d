#include "pipeline/load_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <system_error>
#include <thread>

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
  if (run.ranks.size() >= 2) {
    std::vector<const analysis::RankAnalysis*> ptrs;
    for (const auto& r : run.ranks) ptrs.push_back(&r);
    run.multi = analysis::analyze_ranks(ptrs, options.analysis);
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
