#include "analysis/temporal_breakdown.h"

#include "analysis/interval_union.h"

namespace stepscope::analysis {
namespace {

double pct(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// Accumulates one breakdown from activities visited in start order.
class BreakdownBuilder {
 public:
  void add(const GpuActivity& a) {
    if (out_.activities == 0) {
      out_.start_ns = a.start_ns;
      out_.end_ns = a.end_ns;
    }
    ++out_.activities;
    out_.end_ns = std::max(out_.end_ns, a.end_ns);
    busy_.add(a.start_ns, a.end_ns);
    switch (a.cls) {
      case KernelClass::kComputation: compute_.add(a.start_ns, a.end_ns); break;
      case KernelClass::kCommunication: comm_.add(a.start_ns, a.end_ns); break;
      case KernelClass::kMemory: memory_.add(a.start_ns, a.end_ns); break;
      case KernelClass::kOther: break;
    }
  }

  TemporalBreakdown finish() {
    TemporalBreakdown b = out_;
    b.kernel_time_ns = b.end_ns - b.start_ns;
    b.busy_time_ns = busy_.length();
    b.idle_time_ns = b.kernel_time_ns - b.busy_time_ns;
    b.compute_time_ns = compute_.length();
    b.non_compute_time_ns = b.busy_time_ns - b.compute_time_ns;
    b.communication_time_ns = comm_.length();
    b.memory_time_ns = memory_.length();
    b.idle_pct = pct(b.idle_time_ns, b.kernel_time_ns);
    b.compute_pct = pct(b.compute_time_ns, b.kernel_time_ns);
    b.non_compute_pct = pct(b.non_compute_time_ns, b.kernel_time_ns);
    return b;
  }

 private:
  TemporalBreakdown out_;
  UnionLength busy_, compute_, comm_, memory_;
};

}  // namespace

TemporalBreakdown breakdown_of(const GpuTimeline& timeline, const std::vector<uint32_t>& activities) {
  BreakdownBuilder b;
  for (uint32_t i : activities) b.add(timeline.activities[i]);
  return b.finish();
}

TemporalResult analyze_temporal(const GpuTimeline& timeline, const StepsResult& steps,
                                const std::vector<int32_t>& step_of) {
  TemporalResult r;
  BreakdownBuilder whole;
  // One builder per step; activities arrive in start order, so each step's
  // builder sees its own activities in start order too.
  std::vector<BreakdownBuilder> per_step(steps.steps.size());
  for (size_t i = 0; i < timeline.activities.size(); ++i) {
    const GpuActivity& a = timeline.activities[i];
    whole.add(a);
    if (i < step_of.size() && step_of[i] >= 0) per_step[static_cast<size_t>(step_of[i])].add(a);
  }
  r.rank = whole.finish();
  // Windows of one process read as one rank: the time between them is no
  // part of the GPU span (nothing was recorded there), so not idle either.
  if (const int64_t gap = unrecorded_within(timeline, r.rank.start_ns, r.rank.end_ns); gap > 0) {
    TemporalBreakdown& b = r.rank;
    b.kernel_time_ns -= gap;
    b.idle_time_ns -= gap;
    b.idle_pct = pct(b.idle_time_ns, b.kernel_time_ns);
    b.compute_pct = pct(b.compute_time_ns, b.kernel_time_ns);
    b.non_compute_pct = pct(b.non_compute_time_ns, b.kernel_time_ns);
  }
  r.steps.reserve(per_step.size());
  for (size_t s = 0; s < per_step.size(); ++s) r.steps.push_back({steps.steps[s].step, per_step[s].finish()});
  return r;
}

}  // namespace stepscope::analysis
