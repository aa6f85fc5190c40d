// Training steps: every host "ProfilerStep#N" annotation with the GPU work it
// launched, so per-step numbers measure what the step asked the GPU to do.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/gpu_timeline.h"
#include "trace/event_store.h"

namespace stepscope::analysis {

struct StepSpan {
  int64_t step = -1;            // N of "ProfilerStep#N"
  uint32_t row = 0;             // host annotation row in the store
  int64_t cpu_start_ns = 0;     // host annotation start, ns
  int64_t cpu_end_ns = 0;       // host annotation end, ns
  int64_t cpu_duration_ns = 0;  // cpu_end_ns - cpu_start_ns, ns
  int64_t gpu_activities = 0;   // GPU activities attributed to the step (launched inside the CPU span)
  int64_t gpu_start_ns = 0;     // first start of those activities, ns (0 when gpu_activities == 0)
  int64_t gpu_end_ns = 0;       // last end of those activities, ns (0 when gpu_activities == 0)
  int64_t gpu_duration_ns = 0;  // gpu_end_ns - gpu_start_ns, ns
  // The same step drawn on the device as a gpu_user_annotation, when the trace has one.
  std::optional<int64_t> annotation_gpu_start_ns;  // ns
  std::optional<int64_t> annotation_gpu_end_ns;    // ns
};

struct StepsResult {
  std::vector<StepSpan> steps;          // sorted by cpu_start_ns
  int64_t unattributed_activities = 0;  // GPU activities that fall in no step
  int64_t duplicate_step_numbers = 0;   // annotations whose N repeated an earlier one (kept, in order)
  // Steps left out because a truncation (--salvage) may have cut them
  // (salvage_cut.h): they are in no per-step figure, and their GPU activities
  // count as unattributed. cut_section says where the cut came ("none" when
  // the file was whole).
  int64_t dropped_by_cut = 0;
  std::string cut_section = "none";
  bool cut_touches_steps = false;  // the cut may have touched every step (all dropped, even when there were none)
};

// Steps of one rank; when the file was cut (salvaged), only the steps the
// cut cannot have touched (salvage_cut.h). A GPU activity belongs to the step whose CPU span holds
// its launch start (runtime call start); one without a matched launch belongs
// to the step whose CPU span holds its GPU start.
StepsResult analyze_steps(const trace::EventStore& store, const GpuTimeline& timeline);

// For each timeline activity, the index into result.steps it belongs to, or -1.
// Same rule as analyze_steps; used by per-step breakdowns.
std::vector<int32_t> step_of_activities(const GpuTimeline& timeline, const StepsResult& steps);

}  // namespace stepscope::analysis
