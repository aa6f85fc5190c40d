#include "whatif/profiler_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/saturating.h"

namespace stepscope::whatif {

namespace {

using trace::EventKind;

bool has_key(const trace::EventStore& store, std::string_view key, const std::vector<uint32_t>& rows) {
  const trace::StringId id = store.strings.find(key);
  if (id == trace::StringTable::kMissing) return false;
  // The key is interned once any record used it; make sure an op carries it.
  for (uint32_t r : rows) {
    const auto a = store.arg_rows(r);
    for (uint32_t i = a.first; i < a.last; ++i)
      if (store.args.key[i] == id) return true;
  }
  return false;
}

struct CostEvent {
  int64_t t_ns;
  int64_t cost_ns;
};

// Every record's cost at the time it was spent: an op's or a Python call's
// at its start, a runtime call's inside the call, the step's bookkeeping
// just before the step starts.
std::vector<CostEvent> cost_events(const StepGraph& g, const trace::EventStore& store, const ProfilerSettings& s,
                                   const ProfilerCostModel& m) {
  const auto& ev = store.events;
  const int64_t per_op = m.per_op_ns + (s.shapes ? m.shapes_extra_ns : 0) + (s.flops ? m.flops_extra_ns : 0);
  // with_stack costs model code (a few Python calls per recorded op) far
  // more per call than a pure-Python loop (a DataLoader's tokenizer, dozens
  // of calls per op), where only the tracer's own bookkeeping is added.
  const int64_t ops = s.cpu_ops + s.runtime_calls;
  const int64_t per_python =
      s.python_events > m.python_loop_calls_per_op * std::max<int64_t>(ops, 1) ? m.python_loop_event_ns : m.python_event_ns;
  std::vector<CostEvent> out;
  out.reserve(store.cpu_op_rows.size() + store.runtime_rows.size());
  for (uint32_t r : store.cpu_op_rows) out.push_back({ev.ts_ns[r], per_op});
  for (uint32_t r : store.runtime_rows) out.push_back({ev.ts_ns[r] + ev.dur_ns[r] / 2, per_op});
  for (size_t r = 0; r < ev.ts_ns.size(); ++r) {
    if (ev.kind[r] == EventKind::kMemory) out.push_back({ev.ts_ns[r], m.memory_event_ns});
    else if (ev.kind[r] == EventKind::kPythonFunction) out.push_back({ev.ts_ns[r], per_python});
  }
  for (const HostMark& mk : g.marks)
    if (mk.kind == MarkKind::kStepStart) out.push_back({mk.t_ns - 1, m.per_step_ns});
  std::sort(out.begin(), out.end(), [](const CostEvent& a, const CostEvent& b) { return a.t_ns < b.t_ns; });
  return out;
}

// Per host_order edge, the model's cost spent between its two marks, ns.
// The marks are in recorded time order, so one sweep over marks and events
// gives each mark the cost spent before it (a mark out of order, which the
// graph does not make, is looked up instead).
std::vector<int64_t> cost_per_edge(const StepGraph& g, const std::vector<CostEvent>& events) {
  std::vector<int64_t> prefix(events.size() + 1, 0);
  for (size_t i = 0; i < events.size(); ++i) prefix[i + 1] = analysis::saturating_add(prefix[i], events[i].cost_ns);
  std::vector<int64_t> before(g.marks.size(), 0);  // per mark: cost of the events before it
  size_t j = 0;
  int64_t last = INT64_MIN;
  for (size_t m = 0; m < g.marks.size(); ++m) {
    const int64_t t = g.marks[m].t_ns;
    if (t < last) {
      auto it = std::lower_bound(events.begin(), events.end(), t, [](const CostEvent& e, int64_t x) { return e.t_ns < x; });
      before[m] = prefix[static_cast<size_t>(it - events.begin())];
      continue;
    }
    last = t;
    while (j < events.size() && events[j].t_ns < t) ++j;
    before[m] = prefix[j];
  }
  std::vector<int64_t> cost(g.edges.size(), 0);
  for (size_t i = 0; i < g.edges.size(); ++i) {
    const Edge& e = g.edges[i];
    if (e.kind == EdgeKind::kHostOrder) cost[i] = before[e.to] - before[e.from];
  }
  return cost;
}

ReplayInput scaled_input(const StepGraph& g, const std::vector<int64_t>& cost, double scale) {
  ReplayInput in = recorded_input(g);
  for (size_t i = 0; i < cost.size(); ++i) {
    if (cost[i] == 0) continue;
    const double x = scale * static_cast<double>(cost[i]);
    const int64_t take = x < 9.2e18 ? static_cast<int64_t>(std::llround(x)) : INT64_MAX;
    in.edge_w_ns[i] = std::max<int64_t>(0, in.edge_w_ns[i] - take);
  }
  return in;
}

}  // namespace

ProfilerSettings infer_profiler_settings(const trace::EventStore& store) {
  ProfilerSettings s;
  s.cpu_ops = static_cast<int64_t>(store.cpu_op_rows.size());
  s.runtime_calls = static_cast<int64_t>(store.runtime_rows.size());
  for (EventKind k : store.events.kind) {
    s.memory_events += k == EventKind::kMemory;
    s.python_events += k == EventKind::kPythonFunction;
  }
  s.memory = s.memory_events > 0;
  s.stack = s.python_events > 0;
  s.shapes = has_key(store, "Input Dims", store.cpu_op_rows);
  s.flops = has_key(store, "flops", store.cpu_op_rows);
  return s;
}

int64_t mean_step_ns(const StepGraph& g, const ReplayInput& in) {
  const size_t n = recorded_windows(g).size();
  if (n == 0) return 0;
  return replay(g, in).total_ns / static_cast<int64_t>(n);
}

UnprofiledBaseline unprofiled_baseline(const StepGraph& g, const trace::EventStore& store,
                                       std::optional<double> measured_step_ms, const ProfilerCostModel& model) {
  UnprofiledBaseline b;
  b.settings = infer_profiler_settings(store);
  const std::vector<StepWindow> recorded = recorded_windows(g);
  b.steps = static_cast<int64_t>(recorded.size());
  if (recorded.empty()) {
    b.input = recorded_input(g);
    b.notes.push_back("no step window: the unprofiled step is not estimated");
    return b;
  }
  int64_t total = 0;
  for (const StepWindow& w : recorded) total = analysis::saturating_add(total, w.wall_ns());
  b.profiled_step_ns = total / b.steps;

  const std::vector<CostEvent> events = cost_events(g, store, b.settings, model);
  const std::vector<int64_t> cost = cost_per_edge(g, events);
  {
    const int64_t lo = recorded.front().start_ns, hi = recorded.back().end_ns;
    int64_t inside = 0;
    for (const CostEvent& e : events)
      if (e.t_ns >= lo && e.t_ns < hi) inside = analysis::saturating_add(inside, e.cost_ns);
    b.model_cost_ns = inside / b.steps;
  }
  auto estimate = [&](double scale) { return mean_step_ns(g, scaled_input(g, cost, scale)); };

  if (measured_step_ms && std::isfinite(*measured_step_ms) && *measured_step_ms > 0) {
    b.measured_step_ms = measured_step_ms;
    const auto target = static_cast<int64_t>(std::llround(*measured_step_ms * 1e6));
    // The estimate falls as the scale rises: bisect for the scale that meets
    // the measured step, within [0, kMaxScale].
    constexpr double kMaxScale = 8.0;
    if (target >= b.profiled_step_ns) {
      b.scale = 0;
      b.notes.push_back(fmt::format("the measured unprofiled step ({:.3f} ms) is not shorter than the profiled one "
                                    "({:.3f} ms): no profiler cost is taken off",
                                    *measured_step_ms, static_cast<double>(b.profiled_step_ns) / 1e6));
    } else if (estimate(kMaxScale) > target) {
      b.scale = kMaxScale;
      b.notes.push_back(fmt::format("taking off {:.0f}x the model's profiler cost still leaves the step above the "
                                    "measured {:.3f} ms: the difference is not host time the model can see",
                                    kMaxScale, *measured_step_ms));
    } else {
      double lo = 0, hi = kMaxScale;
      for (int i = 0; i < 40; ++i) {
        const double mid = (lo + hi) / 2;
        (estimate(mid) > target ? lo : hi) = mid;
      }
      b.scale = hi;
    }
    b.calibrated = true;
  }
  b.input = scaled_input(g, cost, b.scale);
  b.unprofiled_step_ns = mean_step_ns(g, b.input);
  return b;
}

}  // namespace stepscope::whatif
