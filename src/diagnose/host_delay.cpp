#include "diagnose/host_delay.h"

#include <algorithm>

#include "diagnose/detector_support.h"
#include "analysis/saturating.h"

namespace stepscope::diagnose {

using analysis::add_into;

int64_t gpu_busy_within(const RankAttribution& a, int64_t start_ns, int64_t end_ns) {
  const int32_t k = step_index_at(a, start_ns);
  if (k < 0) return 0;
  end_ns = std::min(end_ns, a.steps[static_cast<size_t>(k)].end_ns);
  if (end_ns <= start_ns) return 0;
  // Spans are disjoint and in time order; the idle ones are what is not busy.
  auto it = std::upper_bound(a.spans.begin(), a.spans.end(), start_ns,
                             [](int64_t t, const BucketSpan& s) { return t < s.end_ns; });
  int64_t idle = 0;
  for (; it != a.spans.end() && it->start_ns < end_ns; ++it)
    if (is_idle(it->bucket)) add_into(idle, std::min(end_ns, it->end_ns) - std::max(start_ns, it->start_ns));
  return end_ns - start_ns - idle;
}

IdleTaken take_idle_after(const RankContext& rc, std::vector<HostDelay> delays) {
  const RankView& r = *rc.view;
  const RankAttribution& a = *r.attribution;
  IdleTaken out;
  out.per_step.assign(a.steps.size(), 0);
  std::erase_if(delays, [](const HostDelay& d) { return d.ns <= 0; });
  if (delays.empty()) return out;
  std::stable_sort(delays.begin(), delays.end(),
                   [](const HostDelay& x, const HostDelay& y) { return x.at_ns < y.at_ns; });
  const IntervalSet& claimed = rc.claimed;

  // Host time not yet matched with idle, of the step of the delays last met:
  // a delay only shortens gaps of its own step (the step's end sync, or the
  // loop, realigns host and GPU).
  int64_t credit = 0;
  int64_t credit_step = -1;
  size_t next = 0;
  auto admit_until = [&](int64_t t) {
    for (; next < delays.size() && delays[next].at_ns <= t; ++next) {
      const HostDelay& d = delays[next];
      if (static_cast<int64_t>(d.step_index) != credit_step) credit = 0, credit_step = d.step_index;
      add_into(credit, d.ns);
    }
  };
  std::vector<Interval> in_claim, free_parts;
  auto take_from = [&](const BucketSpan& s, int64_t from, int64_t to) {
    if (credit <= 0 || credit_step != static_cast<int64_t>(s.step_index) || from >= to) return;
    in_claim.clear();
    free_parts.clear();
    claimed.split(from, to, in_claim, free_parts);
    for (const Interval& p : free_parts) {
      int64_t take = std::min(p.end_ns - p.start_ns, credit);
      if (take <= 0) break;
      add_into(out.per_step[s.step_index], take);
      out.claims.push_back({r.store->rank, p.start_ns, p.start_ns + take});
      credit -= take;
    }
  };
  for (const BucketSpan& s : a.spans) {
    if (s.bucket != Bucket::kHostOverhead) continue;
    // A delay that starts inside the gap takes only the part after it.
    int64_t pos = s.start_ns;
    admit_until(pos);
    while (next < delays.size() && delays[next].at_ns < s.end_ns) {
      take_from(s, pos, delays[next].at_ns);
      pos = delays[next].at_ns;
      admit_until(pos);
    }
    take_from(s, pos, s.end_ns);
  }
  return out;
}

int64_t claim_idle_after(const RankContext& rc, std::vector<HostDelay> delays, std::vector<int64_t>& saving,
                         std::vector<IdleClaim>& claims) {
  IdleTaken taken = take_idle_after(rc, std::move(delays));
  int64_t total = 0;
  for (size_t k = 0; k < taken.per_step.size() && k < saving.size(); ++k) {
    add_into(saving[k], taken.per_step[k]);
    add_into(total, taken.per_step[k]);
  }
  claims.insert(claims.end(), taken.claims.begin(), taken.claims.end());
  return total;
}

}  // namespace stepscope::diagnose
