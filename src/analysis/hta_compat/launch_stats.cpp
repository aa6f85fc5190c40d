#include "analysis/hta_compat/launch_stats.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace stepscope::analysis::hta {

HtaLaunchStats hta_launch_stats(const HtaRankFrame& frame) {
  const auto& strings = frame.store->strings;
  std::unordered_set<trace::StringId> launch_names;
  for (const char* n : {"cudaLaunchKernel", "cudaLaunchKernelExC", "runFunction - job_prep_and_submit_for_execution",
                        "cudaMemsetAsync", "cudaMemcpyAsync"}) {
    trace::StringId id = strings.find(n);
    if (id != trace::StringTable::kMissing) launch_names.insert(id);
  }
  std::unordered_set<int64_t> correlations;
  for (const auto& e : frame.events)
    if (launch_names.count(e.name)) correlations.insert(e.correlation);

  std::unordered_map<int64_t, std::vector<const HtaEvent*>> gpu_of;
  for (const auto& e : frame.events)
    if (e.on_stream() && correlations.count(e.correlation)) gpu_of[e.correlation].push_back(&e);

  std::vector<double> cpu_duration, gpu_duration, launch_delay;
  for (const auto& c : frame.events) {
    if (c.on_stream() || !correlations.count(c.correlation)) continue;
    auto it = gpu_of.find(c.correlation);
    if (it == gpu_of.end()) continue;
    for (const HtaEvent* g : it->second) {
      cpu_duration.push_back(c.dur);
      gpu_duration.push_back(g->dur);
      launch_delay.push_back(std::max(g->ts - c.ts - c.dur, 0.0));
    }
  }
  HtaLaunchStats s;
  s.rank = frame.rank;
  s.cpu_duration = describe(std::move(cpu_duration));
  s.gpu_duration = describe(std::move(gpu_duration));
  s.launch_delay = describe(std::move(launch_delay));
  return s;
}

}  // namespace stepscope::analysis::hta
