#include "analysis/steps.h"

#include "analysis/salvage_cut.h"

#include <algorithm>
#include <charconv>
#include <unordered_map>
#include <unordered_set>

namespace stepscope::analysis {
namespace {

constexpr std::string_view kStepPrefix = "ProfilerStep#";

int64_t step_number(std::string_view name) {
  if (!name.starts_with(kStepPrefix)) return -1;
  name.remove_prefix(kStepPrefix.size());
  int64_t n = -1;
  auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
  return ec == std::errc() ? n : -1;
}

// Index of the step whose CPU span [start, end) holds t, or -1. Steps are
// sorted by start and do not overlap (each ProfilerStep ends where the next begins).
int32_t step_at(const std::vector<StepSpan>& steps, int64_t t) {
  auto it = std::upper_bound(steps.begin(), steps.end(), t,
                             [](int64_t x, const StepSpan& s) { return x < s.cpu_start_ns; });
  if (it == steps.begin()) return -1;
  --it;
  return t < it->cpu_end_ns ? static_cast<int32_t>(it - steps.begin()) : -1;
}

}  // namespace

std::vector<int32_t> step_of_activities(const GpuTimeline& timeline, const StepsResult& steps) {
  std::vector<int32_t> out;
  if (steps.steps.empty()) return out;
  out.resize(timeline.activities.size());
  for (size_t i = 0; i < timeline.activities.size(); ++i) {
    const GpuActivity& a = timeline.activities[i];
    out[i] = step_at(steps.steps, a.has_launch() ? a.launch_start_ns : a.start_ns);
  }
  return out;
}

StepsResult analyze_steps(const trace::EventStore& store, const GpuTimeline& timeline) {
  StepsResult r;
  const auto& ev = store.events;
  std::unordered_set<int64_t> seen;
  for (uint32_t row : store.step_rows) {
    StepSpan s;
    s.step = step_number(store.name_of(row));
    s.row = row;
    s.cpu_start_ns = ev.ts_ns[row];
    s.cpu_end_ns = ev.ts_ns[row] + std::max<int64_t>(ev.dur_ns[row], 0);
    s.cpu_duration_ns = s.cpu_end_ns - s.cpu_start_ns;
    if (!seen.insert(s.step).second) ++r.duplicate_step_numbers;
    r.steps.push_back(s);
  }
  std::stable_sort(r.steps.begin(), r.steps.end(),
                   [](const StepSpan& a, const StepSpan& b) { return a.cpu_start_ns < b.cpu_start_ns; });
  // A step the cut may have touched would be analysed as whole: drop it.
  const CutEffect cut = cut_effect(store);
  r.cut_section = cut.section;
  if (!cut.steps_whole) {
    r.cut_touches_steps = true;
    r.dropped_by_cut = static_cast<int64_t>(r.steps.size());
    r.steps.clear();
  }
  if (r.steps.empty()) {
    r.unattributed_activities = static_cast<int64_t>(timeline.activities.size());
    return r;
  }

  std::vector<int32_t> step_of = step_of_activities(timeline, r);
  for (size_t i = 0; i < timeline.activities.size(); ++i) {
    if (step_of[i] < 0) {
      ++r.unattributed_activities;
      continue;
    }
    StepSpan& s = r.steps[static_cast<size_t>(step_of[i])];
    const GpuActivity& a = timeline.activities[i];
    if (s.gpu_activities == 0) {
      s.gpu_start_ns = a.start_ns;
      s.gpu_end_ns = a.end_ns;
    }
    ++s.gpu_activities;
    s.gpu_start_ns = std::min(s.gpu_start_ns, a.start_ns);
    s.gpu_end_ns = std::max(s.gpu_end_ns, a.end_ns);
  }
  for (auto& s : r.steps) s.gpu_duration_ns = s.gpu_end_ns - s.gpu_start_ns;

  // Recent PyTorch also draws each step on the device (gpu_user_annotation);
  // keep its span beside ours. The first annotation per step number wins.
  std::unordered_map<int64_t, size_t> index_of_step;
  for (size_t i = 0; i < r.steps.size(); ++i) index_of_step.emplace(r.steps[i].step, i);
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev.kind[i] != trace::EventKind::kGpuUserAnnotation) continue;
    int64_t n = step_number(store.name_of(i));
    if (n < 0) continue;
    auto it = index_of_step.find(n);
    if (it == index_of_step.end()) continue;
    StepSpan& s = r.steps[it->second];
    if (s.annotation_gpu_start_ns) continue;
    s.annotation_gpu_start_ns = ev.ts_ns[i];
    s.annotation_gpu_end_ns = ev.ts_ns[i] + std::max<int64_t>(ev.dur_ns[i], 0);
  }
  return r;
}

}  // namespace stepscope::analysis
