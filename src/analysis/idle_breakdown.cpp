#include "analysis/idle_breakdown.h"

#include "analysis/interval_union.h"

namespace stepscope::analysis {
namespace {

struct LaneState {
  bool started = false;
  int64_t first_start_ns = 0;
  int64_t prev_end_ns = 0;  // latest end seen so far on the lane
  int64_t unrecorded_ns = 0;  // unrecorded time inside the lane's span (gpu_timeline.h)
  UnionLength busy;
};

double ratio(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

IdleBreakdownResult analyze_idle(const GpuTimeline& timeline, const AnalysisOptions& options) {
  IdleBreakdownResult r;
  r.kernel_wait_threshold_ns = options.kernel_wait_threshold_ns;
  r.streams.resize(timeline.lanes.size());
  std::vector<LaneState> state(timeline.lanes.size());
  for (size_t l = 0; l < timeline.lanes.size(); ++l) {
    r.streams[l].device = timeline.lanes[l].device;
    r.streams[l].stream = timeline.lanes[l].stream;
  }
  // One pass in start order; each lane sees its activities in start order.
  for (const GpuActivity& a : timeline.activities) {
    StreamIdle& out = r.streams[a.lane];
    LaneState& st = state[a.lane];
    ++out.activities;
    if (!st.started) {
      st.started = true;
      st.first_start_ns = a.start_ns;
      st.prev_end_ns = a.end_ns;
      st.busy.add(a.start_ns, a.end_ns);
      continue;
    }
    int64_t gap = a.start_ns - st.prev_end_ns;
    // Time between windows of one process read as one rank was not
    // recorded: neither idle nor span.
    if (gap > 0) {
      const int64_t unrecorded = unrecorded_within(timeline, st.prev_end_ns, a.start_ns);
      gap -= unrecorded;
      st.unrecorded_ns += unrecorded;
    }
    if (gap > 0) {
      // HTA's rule: the CPU was late if this activity's runtime call began
      // after the previous activity had finished; otherwise a short gap is
      // launch overhead; everything else is "other".
      if (a.has_launch() && a.launch_start_ns > st.prev_end_ns) {
        out.host_wait_ns += gap;
        ++out.host_wait_gaps;
      } else if (gap < options.kernel_wait_threshold_ns) {
        out.kernel_wait_ns += gap;
        ++out.kernel_wait_gaps;
      } else {
        out.other_ns += gap;
        ++out.other_gaps;
      }
    }
    st.prev_end_ns = std::max(st.prev_end_ns, a.end_ns);
    st.busy.add(a.start_ns, a.end_ns);
  }
  for (size_t l = 0; l < r.streams.size(); ++l) {
    StreamIdle& out = r.streams[l];
    const LaneState& st = state[l];
    if (!st.started) continue;
    out.span_ns = st.prev_end_ns - st.first_start_ns - st.unrecorded_ns;
    out.busy_ns = st.busy.length();
    out.idle_ns = out.host_wait_ns + out.kernel_wait_ns + out.other_ns;
    out.host_wait_ratio = ratio(out.host_wait_ns, out.idle_ns);
    out.kernel_wait_ratio = ratio(out.kernel_wait_ns, out.idle_ns);
    out.other_ratio = ratio(out.other_ns, out.idle_ns);
  }
  return r;
}

}  // namespace stepscope::analysis
