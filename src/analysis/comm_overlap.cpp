#include "analysis/comm_overlap.h"

#include "analysis/interval_union.h"

namespace stepscope::analysis {

CommOverlap analyze_comm_overlap(const GpuTimeline& timeline) {
  UnionList comm, compute;
  for (const GpuActivity& a : timeline.activities) {
    if (a.cls == KernelClass::kCommunication) comm.add(a.start_ns, a.end_ns);
    else if (a.cls == KernelClass::kComputation) compute.add(a.start_ns, a.end_ns);
  }
  CommOverlap r;
  r.communication_time_ns = comm.length();
  r.computation_time_ns = compute.length();
  r.overlapped_time_ns = intersection_length(comm.intervals(), compute.intervals());
  if (!comm.intervals().empty()) {
    // A rank whose communication kernels all have zero duration still "has"
    // communication; report 0% rather than dividing by zero.
    r.overlap_pct = r.communication_time_ns > 0
                        ? 100.0 * static_cast<double>(r.overlapped_time_ns) / static_cast<double>(r.communication_time_ns)
                        : 0.0;
  }
  return r;
}

}  // namespace stepscope::analysis
