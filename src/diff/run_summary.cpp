#include "diff/run_summary.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "analysis/gpu_timeline.h"
#include "analysis/steps.h"
#include "analysis/saturating.h"

namespace stepscope::diff {

using analysis::add_into;

namespace {

double per(double total, int64_t n) { return n > 0 ? total / static_cast<double>(n) : 0.0; }

// Adds one rank's in-step activities to `by_name`. With ProfilerStep markers
// only the activities launched inside a step count (the rule of the step
// table), so warm-up work outside the profiled steps does not dilute the
// per-step numbers; without markers every activity is in the one window.
void add_rank_kernels(const trace::EventStore& store, const analysis::RankAnalysis& rank,
                      const analysis::AnalysisOptions& options, std::map<std::string, KernelUse, std::less<>>& by_name) {
  analysis::GpuTimeline timeline = analysis::build_gpu_timeline(store, options);
  std::vector<int32_t> step_of;
  bool use_steps = !rank.steps.steps.empty();
  if (use_steps) step_of = analysis::step_of_activities(timeline, rank.steps);
  // Intern ids are per rank: resolve each id to its row in by_name once.
  std::vector<KernelUse*> of_id(store.strings.size(), nullptr);
  for (size_t i = 0; i < timeline.activities.size(); ++i) {
    if (use_steps && step_of[i] < 0) continue;
    const analysis::GpuActivity& a = timeline.activities[i];
    KernelUse*& k = of_id[a.name];
    if (!k) {
      std::string_view name = store.strings.get(a.name);
      auto it = by_name.find(name);
      if (it == by_name.end()) {
        it = by_name.emplace(std::string(name), KernelUse{}).first;
        it->second.name = it->first;
        it->second.cls = a.cls;
        it->second.family = a.family;
      }
      k = &it->second;
    }
    ++k->count;
    add_into(k->total_ns, a.duration_ns());
  }
}

}  // namespace

RunSummary summarize_run(const RunInput& run, const analysis::AnalysisOptions& options) {
  RunSummary s;
  const auto& stores = *run.stores;
  const auto& ranks = *run.ranks;
  const diagnose::Diagnosis& d = *run.diagnosis;
  const size_t n = std::min({stores.size(), ranks.size(), d.attribution.size()});
  s.ranks = static_cast<int64_t>(n);
  if (n > 0 && !stores[0]->meta.devices.empty()) s.device = stores[0]->meta.devices.front().name;

  int64_t wall_ns = 0;
  std::array<int64_t, diagnose::kBucketCount> bucket_ns{};
  std::map<std::string, KernelUse, std::less<>> by_name;
  for (size_t i = 0; i < n; ++i) {
    const diagnose::RankAttribution& a = d.attribution[i];
    s.windows += static_cast<int64_t>(a.steps.size());
    if (!a.from_profiler_steps) s.from_profiler_steps = false;
    add_into(wall_ns, a.total.wall_ns());
    for (size_t b = 0; b < bucket_ns.size(); ++b) add_into(bucket_ns[b], a.total.ns[b]);
    add_rank_kernels(*stores[i], ranks[i], options, by_name);
  }
  if (n == 0) s.from_profiler_steps = false;

  s.step_us = per(static_cast<double>(wall_ns) / 1000.0, s.windows);
  int64_t idle_ns = 0;
  int64_t compute_ns = 0;
  for (size_t b = 0; b < bucket_ns.size(); ++b) {
    auto bucket = static_cast<diagnose::Bucket>(b);
    s.bucket_us[b] = per(static_cast<double>(bucket_ns[b]) / 1000.0, s.windows);
    if (diagnose::is_idle(bucket)) add_into(idle_ns, bucket_ns[b]);
    if (bucket <= diagnose::Bucket::kComputeOther) add_into(compute_ns, bucket_ns[b]);
  }
  if (wall_ns > 0) {
    auto share = [&](int64_t ns) { return 100.0 * static_cast<double>(ns) / static_cast<double>(wall_ns); };
    s.busy_pct = share(std::max<int64_t>(0, wall_ns - idle_ns));
    s.compute_pct = share(compute_ns);
    s.effective_compute_pct = share(analysis::saturating_add(bucket_ns[static_cast<size_t>(diagnose::Bucket::kComputeTensorCore)],
                                                          bucket_ns[static_cast<size_t>(diagnose::Bucket::kComputeOther)]));
  }

  int64_t kernel_ns = 0;
  int64_t kernel_count = 0;
  s.kernels.reserve(by_name.size());
  for (auto& [name, k] : by_name) {
    k.count_per_step = per(static_cast<double>(k.count), s.windows);
    k.us_per_step = per(static_cast<double>(k.total_ns) / 1000.0, s.windows);
    k.mean_us = per(static_cast<double>(k.total_ns) / 1000.0, k.count);
    add_into(kernel_ns, k.total_ns);
    kernel_count += k.count;
    s.kernels.push_back(std::move(k));
  }
  s.kernel_us_per_step = per(static_cast<double>(kernel_ns) / 1000.0, s.windows);
  s.kernels_per_step = per(static_cast<double>(kernel_count), s.windows);

  s.primary_bottleneck = d.primary_bottleneck;
  s.findings = d.findings;
  s.minor = d.minor;
  return s;
}

}  // namespace stepscope::diff
