#include "analysis/gpu_timeline.h"

#include <algorithm>
#include <unordered_map>

namespace stepscope::analysis {
namespace {

// Kernel names repeat millions of times but there are only thousands of
// distinct ones: classify each interned name once.
class ClassCache {
 public:
  explicit ClassCache(size_t names) : kinds_(names), known_(names, 0) {}

  KernelKind get(const trace::EventStore& store, trace::StringId name, trace::EventKind kind) {
    if (kind != trace::EventKind::kKernel) return classify_kernel(store.strings.get(name), kind);
    if (!known_[name]) {
      kinds_[name] = classify_kernel(store.strings.get(name), kind);
      known_[name] = 1;
    }
    return kinds_[name];
  }

 private:
  std::vector<KernelKind> kinds_;
  std::vector<uint8_t> known_;
};

int32_t device_of(const trace::EventStore& store, uint32_t row) {
  int32_t d = store.events.device[row];
  return d != trace::kNone ? d : store.events.pid[row];
}

int32_t stream_of(const trace::EventStore& store, uint32_t row) {
  int32_t s = store.events.stream[row];
  return s != trace::kNone ? s : static_cast<int32_t>(store.events.tid[row]);
}

bool lane_less(const Lane& a, const Lane& b) {
  return a.device != b.device ? a.device < b.device : a.stream < b.stream;
}

bool activity_less(const GpuActivity& a, const GpuActivity& b) {
  if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
  if (a.end_ns != b.end_ns) return a.end_ns < b.end_ns;
  return a.row < b.row;
}

}  // namespace

GpuTimeline build_exact_gpu_timeline(const trace::EventStore& store, const AnalysisOptions& /*options*/) {
  GpuTimeline t;
  const auto& ev = store.events;
  ClassCache cache(store.strings.size());
  t.activities.reserve(store.gpu_rows.size());
  for (size_t g = 0; g < store.gpu_rows.size(); ++g) {
    uint32_t row = store.gpu_rows[g];
    if (ev.dur_ns[row] < 0) {
      ++t.dropped_negative;
      continue;
    }
    GpuActivity a;
    a.start_ns = ev.ts_ns[row];
    a.end_ns = ev.ts_ns[row] + ev.dur_ns[row];
    a.row = row;
    a.name = ev.name[row];
    a.kind = ev.kind[row];
    KernelKind k = cache.get(store, a.name, a.kind);
    a.cls = k.cls;
    a.family = k.family;
    uint32_t launch = g < store.launch_of_gpu.size() ? store.launch_of_gpu[g] : trace::EventStore::kNoRow;
    if (launch != trace::EventStore::kNoRow) {
      a.launch_row = launch;
      a.launch_start_ns = ev.ts_ns[launch];
      a.launch_end_ns = ev.ts_ns[launch] + std::max<int64_t>(ev.dur_ns[launch], 0);
    }
    t.activities.push_back(a);
  }
  finalize_gpu_timeline(store, t);
  return t;
}

GpuTimeline build_gpu_timeline(const trace::EventStore& store, const AnalysisOptions& options) {
  if (options.timeline_builder) return options.timeline_builder(store, options);
  return build_exact_gpu_timeline(store, options);
}

int64_t unrecorded_within(const GpuTimeline& timeline, int64_t from, int64_t to) {
  int64_t n = 0;
  for (const auto& [a, b] : timeline.unrecorded) n += std::max<int64_t>(0, std::min(b, to) - std::max(a, from));
  return n;
}

void finalize_gpu_timeline(const trace::EventStore& store, GpuTimeline& t) {
  t.unrecorded = store.meta.unrecorded;
  // The store is time-sorted, so the exact builder's rows are in start order
  // and only each run of equal starts (ordered by end here) needs sorting; a
  // custom builder's rows may be in any order.
  auto& acts = t.activities;
  const auto by_start = [](const GpuActivity& a, const GpuActivity& b) { return a.start_ns < b.start_ns; };
  if (!std::is_sorted(acts.begin(), acts.end(), by_start)) {
    std::sort(acts.begin(), acts.end(), activity_less);
  } else {
    for (auto run = acts.begin(); run != acts.end();) {
      auto run_end = std::find_if(run + 1, acts.end(), [&](const GpuActivity& a) { return a.start_ns != run->start_ns; });
      if (run_end - run > 1 && !std::is_sorted(run, run_end, activity_less)) std::sort(run, run_end, activity_less);
      run = run_end;
    }
  }

  // Distinct (device, stream) pairs, numbered in (device, stream) order.
  auto key_of = [](const Lane& l) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(l.device)) << 32) | static_cast<uint32_t>(l.stream);
  };
  std::unordered_map<uint64_t, uint32_t> lane_of_key;
  t.lanes.clear();
  for (const auto& a : t.activities) {
    Lane l{device_of(store, a.row), stream_of(store, a.row)};
    if (lane_of_key.emplace(key_of(l), 0).second) t.lanes.push_back(l);
  }
  std::sort(t.lanes.begin(), t.lanes.end(), lane_less);
  for (uint32_t i = 0; i < t.lanes.size(); ++i) lane_of_key[key_of(t.lanes[i])] = i;
  for (auto& a : t.activities) a.lane = lane_of_key[key_of(Lane{device_of(store, a.row), stream_of(store, a.row)})];
}

}  // namespace stepscope::analysis
