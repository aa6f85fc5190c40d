#include "analysis/queue_length.h"

#include <algorithm>

namespace stepscope::analysis {
namespace {

// Order of changes at the same instant: ordinary completions first (work
// that ends as another is launched never counts both at once), then
// launches, then completions moved to their own launch time.
enum class ChangeOrder : int8_t { kCompletion = 0, kLaunch = 1, kClampedCompletion = 2 };

struct Change {
  int64_t t_ns;
  ChangeOrder order;
  int32_t delta() const { return order == ChangeOrder::kLaunch ? +1 : -1; }
};

bool change_less(const Change& a, const Change& b) {
  return a.t_ns != b.t_ns ? a.t_ns < b.t_ns : a.order < b.order;
}

// A lane's changes in time order. Launches and completions are each close
// to sorted already (a stream launches and completes its work in order), so
// each list is sorted only if it is not, and the two are merged: no
// n log n sort of both together.
void time_ordered(std::vector<Change>& launches, std::vector<Change>& completions, std::vector<Change>& out) {
  if (!std::is_sorted(launches.begin(), launches.end(), change_less))
    std::sort(launches.begin(), launches.end(), change_less);
  if (!std::is_sorted(completions.begin(), completions.end(), change_less))
    std::sort(completions.begin(), completions.end(), change_less);
  out.resize(launches.size() + completions.size());
  std::merge(launches.begin(), launches.end(), completions.begin(), completions.end(), out.begin(), change_less);
  std::vector<Change>().swap(launches);  // release as we go
  std::vector<Change>().swap(completions);
}

}  // namespace

QueueLengthResult analyze_queue_length(const GpuTimeline& timeline, const AnalysisOptions& options) {
  QueueLengthResult r;
  r.queue_limit = options.queue_limit;
  std::vector<std::vector<Change>> launches(timeline.lanes.size()), completions(timeline.lanes.size());
  for (const GpuActivity& a : timeline.activities) {
    if (!a.has_launch()) continue;
    launches[a.lane].push_back({a.launch_start_ns, ChangeOrder::kLaunch});
    // A completion stamped before its own launch (clock skew between CPU and
    // GPU timestamps) would make the queue negative; it completes at launch.
    if (a.end_ns >= a.launch_start_ns) {
      completions[a.lane].push_back({a.end_ns, ChangeOrder::kCompletion});
    } else {
      completions[a.lane].push_back({a.launch_start_ns, ChangeOrder::kClampedCompletion});
    }
  }
  std::vector<double> samples;
  std::vector<Change> c;
  for (size_t l = 0; l < launches.size(); ++l) {
    if (launches[l].empty()) continue;
    time_ordered(launches[l], completions[l], c);
    StreamQueue q;
    q.device = timeline.lanes[l].device;
    q.stream = timeline.lanes[l].stream;
    q.activities = static_cast<int64_t>(c.size() / 2);
    q.window_start_ns = c.front().t_ns;
    q.window_end_ns = c.back().t_ns;
    samples.clear();
    samples.reserve(c.size());
    int64_t length = 0;
    long double weighted = 0;  // Σ length · dt, in ns
    for (size_t i = 0; i < c.size(); ++i) {
      if (i > 0) {
        const int64_t dt = c[i].t_ns - c[i - 1].t_ns;
        weighted += static_cast<long double>(length) * static_cast<long double>(dt);
        if (length >= options.queue_limit) q.time_at_limit_ns += dt;
        if (length >= 1) q.time_nonempty_ns += dt;
      }
      length += c[i].delta();
      q.max_length = std::max(q.max_length, length);
      samples.push_back(static_cast<double>(length));
    }
    const int64_t window = q.window_end_ns - q.window_start_ns;
    q.mean_length = window > 0 ? static_cast<double>(weighted / static_cast<long double>(window)) : 0.0;
    q.samples = summarize(samples);
    r.streams.push_back(q);
  }
  return r;
}

}  // namespace stepscope::analysis
