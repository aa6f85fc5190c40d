#include "report/html_view.h"

#include <climits>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>

#include "analysis/kernel_class.h"
#include "whatif/critical_path.h"

namespace stepscope::report {

namespace {

using nlohmann::ordered_json;
using trace::EventStore;

constexpr int kClasses = analysis::kKernelClassCount;

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

// The time axis: [start, end) on the shared clock, cut into `columns`.
struct Axis {
  int64_t start_ns = 0;
  int64_t end_ns = 1;
  int columns = 1;
  double width_ns() const { return static_cast<double>(end_ns - start_ns) / columns; }
  int column_of(int64_t t) const {
    auto c = static_cast<int64_t>(static_cast<double>(t - start_ns) / width_ns());
    return static_cast<int>(std::clamp<int64_t>(c, 0, columns - 1));
  }
  int64_t column_start(int c) const {
    return start_ns + static_cast<int64_t>(std::llround(width_ns() * c));
  }
};

int64_t earliest_base(const AnalyzeReport& r) {
  int64_t b = r.stores.empty() ? 0 : r.stores.front()->meta.base_time_ns;
  for (const auto* s : r.stores) b = std::min(b, s->meta.base_time_ns);
  return b;
}

// Step windows of rank i on its own clock: the attribution's when the
// diagnosis ran (what the bars show), else the ProfilerStep CPU spans.
std::vector<std::array<int64_t, 3>> step_windows(const AnalyzeReport& r, size_t i) {
  std::vector<std::array<int64_t, 3>> w;
  if (r.diagnosis && i < r.diagnosis->attribution.size()) {
    for (const auto& s : r.diagnosis->attribution[i].steps) w.push_back({s.step, s.start_ns, s.end_ns});
  } else {
    for (const auto& s : r.ranks[i].steps.steps) w.push_back({s.step, s.cpu_start_ns, s.cpu_end_ns});
  }
  return w;
}

Axis plan_axis(const AnalyzeReport& r, size_t ranks, int columns, int64_t base) {
  std::optional<int64_t> lo, hi;
  auto take = [&](int64_t a, int64_t b) {
    lo = lo ? std::min(*lo, a) : a;
    hi = hi ? std::max(*hi, b) : b;
  };
  for (size_t i = 0; i < ranks; ++i) {
    const EventStore& s = *r.stores[i];
    const int64_t shift = s.meta.base_time_ns - base;
    for (uint32_t row : s.gpu_rows) take(s.events.ts_ns[row] + shift, s.events.ts_ns[row] + s.events.dur_ns[row] + shift);
    for (const auto& w : step_windows(r, i)) take(w[1] + shift, w[2] + shift);
  }
  Axis a;
  a.columns = std::max(1, columns);
  if (lo && hi && *hi > *lo) {
    a.start_ns = *lo;
    a.end_ns = *hi;
  } else if (lo) {
    a.start_ns = *lo;
    a.end_ns = *lo + 1;
  }
  return a;
}

// Busy time per kernel class in each column of one GPU lane.
struct LaneColumns {
  int32_t device = -1;
  int64_t stream = -1;
  int64_t activities = 0;
  std::vector<std::array<double, kClasses>> busy_ns;  // per column
};

// Adds the part of [start, end) that falls in each column to add(column, ns).
template <typename Add>
void spread_over_columns(const Axis& axis, int64_t start, int64_t end, Add&& add) {
  if (end <= start) return;
  for (int c = axis.column_of(start); c < axis.columns; ++c) {
    const int64_t c0 = axis.column_start(c), c1 = c + 1 < axis.columns ? axis.column_start(c + 1) : axis.end_ns;
    if (c0 >= end) break;
    const int64_t overlap = std::min(end, c1) - std::max(start, c0);
    if (overlap > 0) add(c, static_cast<double>(overlap));
  }
}

// A column's share in ‰, at least 1 for any time at all (tiny work stays visible).
int permille_of(double ns, double width) {
  auto p = static_cast<int>(std::lround(std::min(1.0, ns / width) * 1000.0));
  return p == 0 && ns > 0 ? 1 : p;
}

constexpr int kPathCategories = whatif::kPathCategoryCount;

// The critical path of rank i's steps, downsampled like the lanes: per
// column the path's time in each category (the "critical path" row), and per
// GPU lane the time its work is on the path (the lane's highlight).
struct PathColumns {
  bool present = false;
  std::vector<std::array<double, kPathCategories>> by_category;  // per column
  std::map<std::pair<int32_t, int64_t>, std::vector<double>> on_lane;  // (device, stream) -> per column
};

PathColumns path_columns(const AnalyzeReport& r, size_t i, const Axis& axis, int64_t shift) {
  PathColumns p;
  if (!r.diagnosis || i >= r.diagnosis->critical_path.size()) return p;
  const whatif::RankCriticalPath& cp = r.diagnosis->critical_path[i];
  if (cp.steps.empty()) return p;
  p.present = true;
  p.by_category.assign(static_cast<size_t>(axis.columns), {});
  for (const whatif::StepCriticalPath& s : cp.steps)
    for (const whatif::PathSpan& span : s.spans) {
      const int64_t a = span.start_ns + shift, b = span.end_ns + shift;
      spread_over_columns(axis, a, b, [&](int c, double ns) {
        p.by_category[static_cast<size_t>(c)][static_cast<size_t>(span.category)] += ns;
      });
      if (span.device < 0) continue;
      // No structured binding: clang before 16 cannot capture one in a lambda.
      const auto placed = p.on_lane.try_emplace({span.device, span.stream});
      std::vector<double>& lane = placed.first->second;
      if (placed.second) lane.assign(static_cast<size_t>(axis.columns), 0.0);
      spread_over_columns(axis, a, b, [&](int c, double ns) { lane[static_cast<size_t>(c)] += ns; });
    }
  return p;
}

// The host threads' lanes: per column the time a thread spent in runtime
// calls (launches, syncs, copies) and, besides them, in CPU ops. Ops nest
// on a thread, so each is the union of its spans on that thread (events come
// in time order: a span adds only what runs past the ones before it).
constexpr size_t kMaxCpuLanes = 4;

struct CpuLane {
  int32_t pid = 0;
  int64_t tid = 0;
  int64_t ops = 0, calls = 0;
  int64_t op_until = INT64_MIN, call_until = INT64_MIN;
  double op_ns = 0;
  std::vector<std::array<double, 2>> busy_ns;  // per column: runtime calls, CPU ops (union)
};

ordered_json cpu_lanes_of_rank(const EventStore& s, const Axis& axis, int64_t shift) {
  const auto& e = s.events;
  std::map<std::pair<int32_t, int64_t>, CpuLane> lanes;
  for (size_t row = 0; row < e.size(); ++row) {
    const trace::EventKind kind = e.kind[row];
    const bool call = kind == trace::EventKind::kRuntime;
    if (!call && kind != trace::EventKind::kCpuOp) continue;
    auto [it, fresh] = lanes.try_emplace({e.pid[row], e.tid[row]});
    CpuLane& lane = it->second;
    if (fresh) {
      lane.pid = e.pid[row];
      lane.tid = e.tid[row];
      lane.busy_ns.assign(static_cast<size_t>(axis.columns), {});
    }
    int64_t& until = call ? lane.call_until : lane.op_until;
    (call ? lane.calls : lane.ops) += 1;
    const int64_t start = e.ts_ns[row] + shift, end = start + e.dur_ns[row];
    const int64_t from = std::max(start, until);
    if (end > from) {
      spread_over_columns(axis, from, end, [&](int c, double ns) { lane.busy_ns[static_cast<size_t>(c)][call ? 0 : 1] += ns; });
      if (!call) lane.op_ns += static_cast<double>(end - from);
    }
    until = std::max(until, end);
  }
  // The busiest threads (the training loop, autograd's, a DataLoader's), in thread order.
  std::vector<const CpuLane*> shown;
  for (const auto& [key, lane] : lanes) shown.push_back(&lane);
  std::stable_sort(shown.begin(), shown.end(), [](const CpuLane* a, const CpuLane* b) { return a->op_ns > b->op_ns; });
  if (shown.size() > kMaxCpuLanes) shown.resize(kMaxCpuLanes);
  std::sort(shown.begin(), shown.end(),
            [](const CpuLane* a, const CpuLane* b) { return std::pair(a->pid, a->tid) < std::pair(b->pid, b->tid); });
  ordered_json out = ordered_json::array();
  const double width = axis.width_ns();
  for (const CpuLane* lane : shown) {
    // Sparse: [column, runtime calls ‰, other CPU-op time ‰] (ops less the calls inside them).
    ordered_json cols = ordered_json::array();
    for (int c = 0; c < axis.columns; ++c) {
      const auto& b = lane->busy_ns[static_cast<size_t>(c)];
      const int calls = permille_of(b[0], width), ops = permille_of(std::max(0.0, b[1] - b[0]), width);
      if (calls > 0 || ops > 0) cols.push_back({c, calls, ops});
    }
    out.push_back({{"pid", lane->pid}, {"tid", lane->tid}, {"ops", lane->ops}, {"calls", lane->calls}, {"cols", cols}});
  }
  return out;
}

ordered_json timeline_of_rank(const AnalyzeReport& r, size_t i, const Axis& axis, int64_t base) {
  const EventStore& s = *r.stores[i];
  const auto& e = s.events;
  const int64_t shift = s.meta.base_time_ns - base;
  // Classes by name: a trace repeats a few thousand names millions of times.
  std::vector<int8_t> class_of_name(s.strings.size(), -1);
  std::map<std::pair<int32_t, int64_t>, LaneColumns> lanes;
  for (uint32_t row : s.gpu_rows) {
    const int32_t device = e.device[row] != static_cast<int32_t>(trace::kNone) ? e.device[row] : e.pid[row];
    auto [it, fresh] = lanes.try_emplace({device, e.stream[row]});
    LaneColumns& lane = it->second;
    if (fresh) {
      lane.device = device;
      lane.stream = e.stream[row];
      lane.busy_ns.assign(static_cast<size_t>(axis.columns), {});
    }
    ++lane.activities;
    int8_t& cls = class_of_name[e.name[row]];
    if (cls < 0) cls = static_cast<int8_t>(analysis::classify_kernel(s.strings.get(e.name[row]), e.kind[row]).cls);
    const int64_t start = e.ts_ns[row] + shift, end = start + e.dur_ns[row];
    spread_over_columns(axis, start, end, [&](int c, double ns) {
      lane.busy_ns[static_cast<size_t>(c)][static_cast<size_t>(cls)] += ns;
    });
  }
  ordered_json out_lanes = ordered_json::array();
  const double width = axis.width_ns();
  const PathColumns path = path_columns(r, i, axis, shift);
  for (const auto& [key, lane] : lanes) {
    // Sparse: [column, per-class share of the column in ‰ ...] for busy columns.
    ordered_json cols = ordered_json::array();
    for (int c = 0; c < axis.columns; ++c) {
      const auto& b = lane.busy_ns[static_cast<size_t>(c)];
      ordered_json col = ordered_json::array({c});
      bool any = false;
      for (int k = 0; k < kClasses; ++k) {
        const int permille = permille_of(b[static_cast<size_t>(k)], width);
        any |= permille > 0;
        col.push_back(permille);
      }
      if (any) cols.push_back(std::move(col));
    }
    // Sparse: [column, ‰ of the column where this stream's work is on the critical path].
    ordered_json on_path = ordered_json::array();
    if (auto it = path.on_lane.find({lane.device, lane.stream}); it != path.on_lane.end())
      for (int c = 0; c < axis.columns; ++c)
        if (const double ns = it->second[static_cast<size_t>(c)]; ns > 0) on_path.push_back({c, permille_of(ns, width)});
    out_lanes.push_back({{"device", lane.device},
                         {"stream", lane.stream},
                         {"activities", lane.activities},
                         {"cols", cols},
                         {"path", on_path}});
  }
  // Sparse: [column, per-category share of the column in ‰ ...] where the path runs; null without a path.
  ordered_json path_cols = nullptr;
  if (path.present) {
    path_cols = ordered_json::array();
    for (int c = 0; c < axis.columns; ++c) {
      const auto& b = path.by_category[static_cast<size_t>(c)];
      ordered_json col = ordered_json::array({c});
      bool any = false;
      for (int k = 0; k < kPathCategories; ++k) {
        const int pm = permille_of(b[static_cast<size_t>(k)], width);
        any |= pm > 0;
        col.push_back(pm);
      }
      if (any) path_cols.push_back(std::move(col));
    }
  }
  ordered_json steps = ordered_json::array();
  for (const auto& w : step_windows(r, i))
    steps.push_back({{"step", w[0]}, {"start_us", us(w[1] + shift - axis.start_ns)}, {"end_us", us(w[2] + shift - axis.start_ns)}});
  return {{"rank", s.rank},        {"clock_shift_us", us(shift)},
          {"cpu_lanes", cpu_lanes_of_rank(s, axis, shift)}, {"lanes", out_lanes},
          {"steps", steps},          {"critical_path", path_cols}};
}

// Allocator samples of one rank, per device: the largest Total Allocated and
// Total Reserved in each column, and the values in force at the axis start.
void memory_of_rank(const AnalyzeReport& r, size_t i, const Axis& axis, int64_t base, ordered_json& series) {
  const EventStore& s = *r.stores[i];
  const auto& e = s.events;
  const int64_t shift = s.meta.base_time_ns - base;
  const auto k_alloc = s.strings.find("Total Allocated"), k_res = s.strings.find("Total Reserved");
  const auto k_type = s.strings.find("Device Type"), k_id = s.strings.find("Device Id");
  if (k_alloc == trace::StringTable::kMissing || k_res == trace::StringTable::kMissing) return;
  auto get = [&](size_t row, trace::StringId key) -> std::optional<int64_t> {
    if (auto v = s.arg_int(row, key)) return v;
    if (auto d = s.arg_number(row, key)) return static_cast<int64_t>(*d);
    return std::nullopt;
  };
  struct Device {
    std::optional<std::array<int64_t, 2>> initial;  // last sample before the axis start
    std::map<int, std::array<int64_t, 2>> cols;     // column -> (max allocated, max reserved)
    int64_t samples = 0;
  };
  std::map<std::pair<int64_t, int64_t>, Device> devices;
  for (size_t row = 0; row < e.size(); ++row) {
    if (e.kind[row] != trace::EventKind::kMemory) continue;
    auto alloc = get(row, k_alloc), res = get(row, k_res);
    if (!alloc || !res) continue;
    Device& d = devices[{get(row, k_type).value_or(-1), get(row, k_id).value_or(-1)}];
    ++d.samples;
    const int64_t t = e.ts_ns[row] + shift;
    if (t < axis.start_ns) {
      d.initial = std::array<int64_t, 2>{*alloc, *res};
      continue;
    }
    if (t >= axis.end_ns) continue;
    auto [it, fresh] = d.cols.try_emplace(axis.column_of(t), std::array<int64_t, 2>{*alloc, *res});
    if (!fresh) {
      it->second[0] = std::max(it->second[0], *alloc);
      it->second[1] = std::max(it->second[1], *res);
    }
  }
  for (const auto& [key, d] : devices) {
    const auto [type, id] = key;
    int64_t capacity = 0;
    if (type == 1)
      for (const auto& dev : s.meta.devices)
        if (dev.id == id) capacity = dev.total_global_mem;
    ordered_json cols = ordered_json::array();
    for (const auto& [c, v] : d.cols) cols.push_back({c, v[0], v[1]});
    series.push_back({{"rank", s.rank},
                      {"device_type", type},
                      {"device_id", id},
                      {"samples", d.samples},
                      {"capacity_bytes", capacity},
                      {"initial", d.initial ? ordered_json({(*d.initial)[0], (*d.initial)[1]}) : ordered_json(nullptr)},
                      {"cols", cols}});
  }
}

}  // namespace

ordered_json build_html_view(const AnalyzeReport& report, const HtmlViewOptions& options) {
  const size_t ranks = std::min(options.max_ranks, report.stores.size());
  const int64_t base = earliest_base(report);
  const Axis axis = plan_axis(report, ranks, options.timeline_columns, base);
  Axis memory_axis = axis;
  memory_axis.columns = std::max(1, options.memory_columns);

  ordered_json timeline = ordered_json::array();
  ordered_json memory = ordered_json::array();
  for (size_t i = 0; i < ranks; ++i) {
    timeline.push_back(timeline_of_rank(report, i, axis, base));
    memory_of_rank(report, i, memory_axis, base, memory);
  }
  ordered_json path_categories = ordered_json::array();
  for (int k = 0; k < kPathCategories; ++k)
    path_categories.push_back(std::string(whatif::to_string(static_cast<whatif::PathCategory>(k))));
  ordered_json classes = ordered_json::array();
  for (int k = 0; k < kClasses; ++k) classes.push_back(std::string(analysis::to_string(static_cast<analysis::KernelClass>(k))));
  return {{"axis",
           {{"start_us", us(axis.start_ns)},
            {"duration_us", us(axis.end_ns - axis.start_ns)},
            {"timeline_columns", axis.columns},
            {"memory_columns", memory_axis.columns}}},
          {"ranks_total", report.ranks.size()},
          {"from_summaries", report.summaries > 0},
          {"ranks_drawn", ranks},
          {"classes", classes},
          {"path_categories", path_categories},
          {"timeline", timeline},
          {"memory", memory}};
}

}  // namespace stepscope::report
