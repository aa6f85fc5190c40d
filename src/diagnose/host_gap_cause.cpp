#include "diagnose/host_gap_cause.h"

#include <algorithm>
#include <climits>
#include <iterator>

#include "diagnose/detector_support.h"

namespace stepscope::diagnose {

std::string_view to_string(HostGapCause c) {
  switch (c) {
    case HostGapCause::kLaunchOverhead: return "launch_overhead";
    case HostGapCause::kStreamWait: return "stream_wait";
    case HostGapCause::kPreprocessing: return "preprocessing";
    case HostGapCause::kGraphCapture: return "graph_capture";
  }
  return "launch_overhead";
}

std::string_view remedy_of(HostGapCause c) {
  switch (c) {
    case HostGapCause::kStreamWait:
      return "The work was already launched and waited on another stream (cudaStreamWaitEvent / an event recorded on "
             "another stream), a dependency rather than host overhead: find what the other stream waits for, record "
             "the event earlier, or overlap the dependency with independent work.";
    case HostGapCause::kPreprocessing:
      return "Host work runs before the step's first kernel (data preparation, tokenisation, building inputs on the "
             "CPU): move it out of the step into DataLoader workers or a prefetch thread so it overlaps the previous "
             "step.";
    case HostGapCause::kGraphCapture:
      return "CUDA graphs are captured and instantiated here, a one-time cost: leave warm-up and capture steps out of "
             "the profiled steps (torch.profiler schedule with warmup) before judging the steady state.";
    case HostGapCause::kLaunchOverhead: break;
  }
  return "";
}

bool is_graph_capture_call(std::string_view name) {
  // CUDA runtime API: cudaStreamBeginCapture(ToGraph), cudaStreamEndCapture,
  // cudaGraphInstantiate(WithFlags|WithParams); driver: cuStreamBeginCapture,
  // cuGraphInstantiate...; HIP: hipStreamBeginCapture, hipGraphInstantiate.
  for (std::string_view word : {"StreamBeginCapture", "StreamEndCapture", "GraphInstantiate"})
    if (name.find(word) != std::string_view::npos) return true;
  return false;
}

HostGapClassifier::HostGapClassifier(const trace::EventStore& store, const analysis::GpuTimeline& timeline,
                                     const RankAttribution& attribution)
    : store_(store), first_gpu_start_(attribution.steps.size(), INT64_MAX) {
  for (size_t r = 0; r < store.events.size(); ++r) {
    if (store.events.kind[r] != trace::EventKind::kRuntime || !is_graph_capture_call(store.name_of(r))) continue;
    captures_.push_back({store.events.ts_ns[r], store.events.ts_ns[r] + store.events.dur_ns[r]});
  }
  std::sort(captures_.begin(), captures_.end());
  // Each entry's end becomes the latest end up to it, so one binary search
  // answers "does any capture call overlap [a, b)".
  for (size_t i = 1; i < captures_.size(); ++i) captures_[i].second = std::max(captures_[i].second, captures_[i - 1].second);
  for (const auto& act : timeline.activities) {
    const int32_t k = step_index_at(attribution, act.start_ns);
    if (k >= 0) first_gpu_start_[static_cast<size_t>(k)] = std::min(first_gpu_start_[static_cast<size_t>(k)], act.start_ns);
  }
}

std::array<int64_t, kHostGapCauseCount> HostGapClassifier::split(const BucketSpan& s) const {
  std::array<int64_t, kHostGapCauseCount> parts{};
  const int64_t len = s.end_ns - s.start_ns;
  auto put = [&](HostGapCause c, int64_t ns) { parts[static_cast<size_t>(c)] += ns; };
  // A capture or instantiation inside the gap: the whole gap is its cost.
  auto it = std::lower_bound(captures_.begin(), captures_.end(), std::pair<int64_t, int64_t>{s.end_ns, INT64_MIN});
  if (it != captures_.begin() && std::prev(it)->second > s.start_ns) {
    put(HostGapCause::kGraphCapture, len);
    return parts;
  }
  // The work that ended the gap had been submitted (its launch call had
  // returned) long before the gap ended: from then on it waited on a dependency.
  int64_t wait = 0;
  if (s.cause_row != trace::EventStore::kNoRow && s.cause_row < store_.events.size()) {
    const int64_t launch_end = store_.events.ts_ns[s.cause_row] + store_.events.dur_ns[s.cause_row];
    const int64_t queued = s.end_ns - std::max(s.start_ns, launch_end);
    if (queued > kQueuedAllowanceNs) wait = std::min(queued, len);
  }
  put(HostGapCause::kStreamWait, wait);
  const int64_t host = len - wait;
  // Host time before the step's first GPU work, long enough to be host work
  // of its own rather than the first launch.
  const bool before_first = s.step_index < first_gpu_start_.size() && s.end_ns <= first_gpu_start_[s.step_index];
  put(before_first && host >= kPreprocessingMinNs ? HostGapCause::kPreprocessing : HostGapCause::kLaunchOverhead, host);
  return parts;
}

}  // namespace stepscope::diagnose
