#include "pipeline/rank_workers.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>

#include "trace/trace_set.h"

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

}  // namespace stepscope::pipeline
