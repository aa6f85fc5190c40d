// Host work that delays later launches. Work the host does while the GPU
// still has queued work costs no GPU time at that moment, but it uses up the
// host's lead over the GPU: every later launch of the step comes that much
// later, and where the step is bound by the host the GPU then waits in later
// host_overhead gaps. A cause removed from such a step therefore also saves
// host_overhead idle after it, never more than its host time and never more
// than the idle there is. Definitions: docs/findings.md, "How savings are
// bounded".
#pragma once

#include <cstdint>
#include <vector>

#include "diagnose/detector.h"
#include "diagnose/detector_part.h"

namespace stepscope::diagnose {

// `ns` of host time, spent from `at_ns` on, in attribution step `step_index`.
struct HostDelay {
  int64_t at_ns = 0;
  uint32_t step_index = 0;
  int64_t ns = 0;
};

// The part of [start, end) in which the rank's GPU was not idle (any
// non-idle bucket), clipped to the step window that holds start_ns (0 when
// none does).
int64_t gpu_busy_within(const RankAttribution& a, int64_t start_ns, int64_t end_ns);

struct IdleTaken {
  std::vector<int64_t> per_step;  // ns taken, per attribution step of the rank
  std::vector<IdleClaim> claims;  // the intervals taken, for later detectors
};

// Gives the rank's host_overhead idle that earlier detectors did not claim
// (rc.claimed) to the delays, in one sweep: each gap piece goes to the
// delays of its own step that started before it, while their time lasts.
// Delays may come in any order; those with ns <= 0 are ignored.
IdleTaken take_idle_after(const RankContext& rc, std::vector<HostDelay> delays);

// take_idle_after, with what it took added to the rank's per-step `saving`
// and its intervals to `claims`; returns the ns taken over all steps.
int64_t claim_idle_after(const RankContext& rc, std::vector<HostDelay> delays, std::vector<int64_t>& saving,
                         std::vector<IdleClaim>& claims);

}  // namespace stepscope::diagnose
