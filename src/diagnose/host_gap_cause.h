// Why the GPU sat idle in a host_overhead gap, so the finding can word each
// part with the remedy that fits it (docs/findings.md, host_overhead). The
// attribution puts a gap in host_overhead when the work that ended it had
// not been submitted when the GPU ran dry; that covers launch overhead
// proper, but also three causes torch.compile / CUDA graphs do not remove.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/gpu_timeline.h"
#include "diagnose/step_attribution.h"
#include "trace/event_store.h"

namespace stepscope::diagnose {

enum class HostGapCause : uint8_t {
  kLaunchOverhead,  // the host was still launching / running framework code (the default)
  kStreamWait,      // the ending work was submitted but queued behind a dependency
                    // (cudaStreamWaitEvent on another stream's event): it started
                    // more than kQueuedAllowanceNs after its launch call returned
  kPreprocessing,   // a stretch of at least kPreprocessingMinNs before the step's
                    // first GPU work: host work (data preparation) ahead of the step's kernels
  kGraphCapture,    // a CUDA-graph capture or instantiation ran in the gap: a one-time cost
};
constexpr int kHostGapCauseCount = 4;

std::string_view to_string(HostGapCause c);  // "launch_overhead", "stream_wait", "preprocessing", "graph_capture"
// The change that removes a cause's idle (docs/findings.md, host_overhead).
// Launch overhead's remedy depends on the run (graphs, compiled, eager): the
// detector chooses it; this returns "" for it.
std::string_view remedy_of(HostGapCause c);

// A launched kernel reaches an idle GPU within a few microseconds of its
// launch call's return (CUDA launch latency, ~5 us; the profiler adds a
// few more). Work that waited longer on an idle GPU waited on something else.
inline constexpr int64_t kQueuedAllowanceNs = 20'000;
// The gap before a step's first kernel is normal launch overhead when short
// (the first op's dispatch and launch: tens of microseconds); a stretch of a
// millisecond or more is host work no launch path explains.
inline constexpr int64_t kPreprocessingMinNs = 1'000'000;

// cudaStreamBeginCapture / cudaStreamEndCapture / cudaGraphInstantiate* and
// their driver (cu*) and HIP (hip*) spellings.
bool is_graph_capture_call(std::string_view name);

// Classifies the host_overhead spans of one rank, time by cause.
class HostGapClassifier {
 public:
  HostGapClassifier(const trace::EventStore& store, const analysis::GpuTimeline& timeline,
                    const RankAttribution& attribution);
  // The time of span `s` (a kHostOverhead span) per cause, indexed by HostGapCause;
  // the parts sum to the span's length.
  std::array<int64_t, kHostGapCauseCount> split(const BucketSpan& s) const;

 private:
  const trace::EventStore& store_;
  // Capture calls by start: (start, latest end of this and every earlier call).
  std::vector<std::pair<int64_t, int64_t>> captures_;
  std::vector<int64_t> first_gpu_start_;                // per step: start of its first GPU activity (INT64_MAX: none)
};

}  // namespace stepscope::diagnose
