#include "analysis/launch_stats.h"

#include <algorithm>

namespace stepscope::analysis {

LaunchStats analyze_launches(const trace::EventStore& store, const GpuTimeline& timeline,
                             const AnalysisOptions& options) {
  LaunchStats r;
  r.launch_delay_threshold_ns = options.launch_delay_outlier_ns;
  r.cpu_duration_threshold_ns = options.cpu_launch_outlier_ns;
  std::vector<double> cpu_us, gpu_us, delay_us, latency_us;
  // (delay, activity index) of the worst launches, kept as a min-heap of size k.
  std::vector<std::pair<int64_t, uint32_t>> worst;
  const size_t k = static_cast<size_t>(std::max(options.worst_launches, 0));
  auto heap_cmp = [](const auto& a, const auto& b) { return a.first > b.first; };

  for (size_t i = 0; i < timeline.activities.size(); ++i) {
    const GpuActivity& a = timeline.activities[i];
    if (!a.has_launch()) {
      ++r.unmatched_kernels;
      continue;
    }
    ++r.launches;
    const int64_t cpu = a.launch_end_ns - a.launch_start_ns;
    const int64_t delay = a.start_ns - a.launch_end_ns;
    cpu_us.push_back(static_cast<double>(cpu) / 1000.0);
    gpu_us.push_back(static_cast<double>(a.duration_ns()) / 1000.0);
    delay_us.push_back(static_cast<double>(delay) / 1000.0);
    latency_us.push_back(static_cast<double>(a.start_ns - a.launch_start_ns) / 1000.0);
    if (delay > options.launch_delay_outlier_ns) ++r.launch_delay_outliers;
    if (cpu > options.cpu_launch_outlier_ns) ++r.cpu_duration_outliers;
    if (delay < 0) ++r.negative_launch_delays;
    if (k > 0 && (worst.size() < k || delay > worst.front().first)) {
      if (worst.size() == k) {
        std::pop_heap(worst.begin(), worst.end(), heap_cmp);
        worst.pop_back();
      }
      worst.emplace_back(delay, static_cast<uint32_t>(i));
      std::push_heap(worst.begin(), worst.end(), heap_cmp);
    }
  }
  r.cpu_duration_us = summarize(cpu_us);
  r.gpu_duration_us = summarize(gpu_us);
  r.launch_delay_us = summarize(delay_us);
  r.start_latency_us = summarize(latency_us);

  std::sort(worst.begin(), worst.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (const auto& [delay, i] : worst) {
    const GpuActivity& a = timeline.activities[i];
    LaunchRecord rec;
    rec.name = std::string(store.strings.get(a.name));
    rec.stream = timeline.lanes[a.lane].stream;
    rec.launch_start_ns = a.launch_start_ns;
    rec.cpu_duration_ns = a.launch_end_ns - a.launch_start_ns;
    rec.gpu_duration_ns = a.duration_ns();
    rec.launch_delay_ns = delay;
    rec.start_latency_ns = a.start_ns - a.launch_start_ns;
    r.worst_launch_delays.push_back(std::move(rec));
  }
  return r;
}

}  // namespace stepscope::analysis
