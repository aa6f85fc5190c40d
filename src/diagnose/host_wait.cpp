#include "diagnose/host_wait.h"

#include <algorithm>

#include "diagnose/detector_support.h"
#include "diagnose/host_delay.h"
#include "diagnose/interval_set.h"
#include "analysis/saturating.h"

namespace stepscope::diagnose {

using analysis::add_into;

std::vector<int64_t> host_wait_on_gpu(const RankView& r) {
  const RankAttribution& a = *r.attribution;
  std::vector<int64_t> wait(a.steps.size(), 0);
  std::vector<Interval> blocked;
  for (const HostCall& c : r.host->syncs.calls()) blocked.push_back({c.start_ns, c.end_ns});
  const trace::EventColumns& ev = r.store->events;
  for (uint32_t row : r.store->runtime_rows)
    if (ev.dur_ns[row] >= kBlockedCallNs) blocked.push_back({ev.ts_ns[row], ev.ts_ns[row] + ev.dur_ns[row]});
  // Merged, so that two threads waiting at once count once.
  const IntervalSet waits(std::move(blocked));
  for (const Interval& i : waits.intervals()) {
    // A wait that crosses a step boundary counts in each step it covers.
    for (int64_t t = i.start_ns; t < i.end_ns;) {
      const int32_t k = step_index_at(a, t);
      if (k < 0) break;
      const int64_t step_end = a.steps[static_cast<size_t>(k)].end_ns;
      add_into(wait[static_cast<size_t>(k)], gpu_busy_within(a, t, std::min(i.end_ns, step_end)));
      t = step_end;
    }
  }
  return wait;
}

int64_t cap_at_host_wait(const RankView& r, std::vector<int64_t>& saving) {
  const RankAttribution& a = *r.attribution;
  if (!a.from_profiler_steps || r.store->runtime_rows.empty() || a.steps.size() < 2) return 0;
  const std::vector<int64_t> wait = host_wait_on_gpu(r);
  int64_t removed = 0;
  for (size_t k = 0; k + 1 < a.steps.size() && k < saving.size(); ++k) {
    if (saving[k] <= wait[k]) continue;
    add_into(removed, saving[k] - wait[k]);
    saving[k] = wait[k];
  }
  return removed;
}

}  // namespace stepscope::diagnose
