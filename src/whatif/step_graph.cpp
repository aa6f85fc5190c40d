#include "whatif/step_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace stepscope::whatif {

std::string_view to_string(EdgeKind k) {
  switch (k) {
    case EdgeKind::kHostOrder: return "host_order";
    case EdgeKind::kLaunch: return "launch";
    case EdgeKind::kAnchor: return "anchor";
    case EdgeKind::kStream: return "stream";
    case EdgeKind::kCrossStream: return "cross_stream";
    case EdgeKind::kHostWait: return "host_wait";
  }
  return "unknown";
}

namespace {

using analysis::GpuActivity;

bool is_end(MarkKind k) { return k == MarkKind::kCallEnd || k == MarkKind::kStepEnd || k == MarkKind::kLoaderEnd; }

int64_t median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// Host marks in time order: at one time, ends before starts (a call that
// returns at t comes before the one that starts at t), then by row.
std::vector<HostMark> collect_marks(const trace::EventStore& store, const analysis::StepsResult& steps,
                                    const HostSpans& host) {
  std::vector<HostMark> m;
  const auto& ev = store.events;
  m.reserve(2 * store.runtime_rows.size() + 2 * steps.steps.size() + 2 * host.dataloader.size());
  for (uint32_t r : store.runtime_rows) {
    m.push_back({ev.ts_ns[r], r, MarkKind::kCallStart});
    m.push_back({ev.ts_ns[r] + ev.dur_ns[r], r, MarkKind::kCallEnd});
  }
  for (const auto& s : steps.steps) {
    m.push_back({s.cpu_start_ns, s.row, MarkKind::kStepStart});
    m.push_back({s.cpu_end_ns, s.row, MarkKind::kStepEnd});
  }
  for (const HostSpan& c : host.dataloader) {
    m.push_back({c.start_ns, c.row, MarkKind::kLoaderStart});
    m.push_back({c.end_ns, c.row, MarkKind::kLoaderEnd});
  }
  std::sort(m.begin(), m.end(), [](const HostMark& a, const HostMark& b) {
    if (a.t_ns != b.t_ns) return a.t_ns < b.t_ns;
    if (is_end(a.kind) != is_end(b.kind)) return is_end(a.kind);
    if (a.row != b.row) return a.row < b.row;
    return a.kind < b.kind;
  });
  return m;
}

// (row, mark) of one mark kind, sorted by row, for lookups by store row.
class MarkByRow {
 public:
  MarkByRow(const std::vector<HostMark>& marks, MarkKind kind) {
    for (size_t i = 0; i < marks.size(); ++i)
      if (marks[i].kind == kind) index_.emplace_back(marks[i].row, static_cast<uint32_t>(i));
    std::sort(index_.begin(), index_.end());
  }
  uint32_t find(uint32_t row) const {
    auto it = std::lower_bound(index_.begin(), index_.end(), std::make_pair(row, uint32_t{0}));
    return it != index_.end() && it->first == row ? it->second : kNoNode;
  }

 private:
  std::vector<std::pair<uint32_t, uint32_t>> index_;
};

// Activities of each lane in start order, with "the last one that ended by t".
struct Lanes {
  std::vector<std::vector<uint32_t>> acts;  // per lane: activity indexes in start order
  std::vector<uint32_t> prev;               // per activity: the previous one on its lane, or kNoNode

  explicit Lanes(const analysis::GpuTimeline& tl) : acts(tl.lanes.size()), prev(tl.activities.size(), kNoNode) {
    for (uint32_t k = 0; k < tl.activities.size(); ++k) {
      auto& lane = acts[tl.activities[k].lane];
      if (!lane.empty()) prev[k] = lane.back();
      lane.push_back(k);
    }
  }
  // The latest-ending activity of `lane` that ended in [lo, hi], or kNoNode.
  // A stream runs its work in order, so ends rise with starts; a few steps
  // back cover the rare out-of-order end.
  uint32_t last_ended_in(const analysis::GpuTimeline& tl, size_t lane, int64_t lo, int64_t hi) const {
    const auto& v = acts[lane];
    auto it = std::upper_bound(v.begin(), v.end(), hi,
                               [&](int64_t t, uint32_t k) { return t < tl.activities[k].start_ns; });
    uint32_t best = kNoNode;
    for (int back = 0; back < 8 && it != v.begin(); ++back) {
      --it;
      const GpuActivity& a = tl.activities[*it];
      if (a.end_ns <= hi && a.end_ns >= lo && (best == kNoNode || a.end_ns > tl.activities[best].end_ns)) best = *it;
    }
    return best;
  }
};

struct Typical {
  int64_t launch = 0, gap = 0;
};

// Launch latency where the stream was idle when the call started (the
// launch bound the start), and the gap between queued work on a stream
// (its launch returned before the previous work ended).
Typical typical_weights(const analysis::GpuTimeline& tl, const Lanes& lanes) {
  std::vector<int64_t> launch, gap;
  for (size_t k = 0; k < tl.activities.size(); ++k) {
    const GpuActivity& a = tl.activities[k];
    const uint32_t p = lanes.prev[k];
    const int64_t prev_end = p == kNoNode ? INT64_MIN : tl.activities[p].end_ns;
    if (a.has_launch() && prev_end <= a.launch_start_ns && a.start_ns >= a.launch_start_ns)
      launch.push_back(a.start_ns - a.launch_start_ns);
    if (p != kNoNode && (!a.has_launch() || a.launch_end_ns <= prev_end) && a.start_ns >= prev_end)
      gap.push_back(a.start_ns - prev_end);
  }
  return {median(std::move(launch)), median(std::move(gap))};
}

struct Wait {
  uint32_t mark;      // the blocking call's end mark
  uint32_t activity;  // work it waited for
};

// Blocking calls and the work each waited for: per stream, the last work
// launched before the call started that ended while the call ran. A call
// during which no such work ended did not wait.
std::vector<Wait> blocking_waits(const analysis::GpuTimeline& tl, const Lanes& lanes, const HostSpans& host,
                                 const MarkByRow& end_marks) {
  std::vector<Wait> out;
  for (const HostSpan* c = host.blocking.data(); c != host.blocking.data() + host.blocking.size(); ++c) {
    const uint32_t mark = end_marks.find(c->row);
    if (mark == kNoNode) continue;
    for (size_t lane = 0; lane < tl.lanes.size(); ++lane) {
      uint32_t k = lanes.last_ended_in(tl, lane, c->start_ns + 1, c->end_ns);
      if (k == kNoNode) continue;
      const GpuActivity& a = tl.activities[k];
      const int64_t issued = a.has_launch() ? a.launch_start_ns : a.start_ns;
      if (issued <= c->start_ns) out.push_back({mark, k});
    }
  }
  return out;
}

}  // namespace

std::vector<uint32_t> topological_order(size_t n, const std::vector<Edge>& edges) {
  std::vector<uint32_t> indegree(n, 0), out_begin(n + 1, 0), out;
  for (const Edge& e : edges) {
    ++indegree[e.to];
    ++out_begin[e.from + 1];
  }
  for (size_t i = 0; i < n; ++i) out_begin[i + 1] += out_begin[i];
  out.resize(edges.size());
  std::vector<uint32_t> fill(out_begin.begin(), out_begin.end() - 1);
  for (const Edge& e : edges) out[fill[e.from]++] = e.to;
  std::vector<uint32_t> order;
  order.reserve(n);
  for (uint32_t v = 0; v < n; ++v)
    if (indegree[v] == 0) order.push_back(v);
  for (size_t head = 0; head < order.size(); ++head) {
    const uint32_t u = order[head];
    for (uint32_t i = out_begin[u]; i < out_begin[u + 1]; ++i)
      if (--indegree[out[i]] == 0) order.push_back(out[i]);
  }
  return order;
}

StepGraph build_step_graph(const trace::EventStore& store, const analysis::GpuTimeline& tl,
                           const analysis::StepsResult& steps, const HostSpans& host) {
  StepGraph g;
  g.marks = collect_marks(store, steps, host);
  const size_t m = g.marks.size(), n = m + tl.activities.size();
  g.recorded_ns.resize(n);
  g.gpu_dur_ns.resize(tl.activities.size());
  for (size_t i = 0; i < m; ++i) g.recorded_ns[i] = g.marks[i].t_ns;
  for (size_t k = 0; k < tl.activities.size(); ++k) {
    g.recorded_ns[m + k] = tl.activities[k].start_ns;
    g.gpu_dur_ns[k] = tl.activities[k].duration_ns();
  }
  const Lanes lanes(tl);
  const Typical typ = typical_weights(tl, lanes);
  g.launch_latency_ns = typ.launch;
  g.stream_gap_ns = typ.gap;
  const MarkByRow call_start(g.marks, MarkKind::kCallStart), call_end(g.marks, MarkKind::kCallEnd);

  // Blocking calls: the release time is the median, over calls, of the time
  // from the last waited-for end to the return.
  std::vector<Wait> waits = blocking_waits(tl, lanes, host, call_end);
  {
    std::vector<int64_t> last_end(m, INT64_MIN);
    for (const Wait& w : waits) last_end[w.mark] = std::max(last_end[w.mark], tl.activities[w.activity].end_ns);
    std::vector<int64_t> release;
    for (size_t i = 0; i < m; ++i)
      if (last_end[i] != INT64_MIN) release.push_back(g.marks[i].t_ns - last_end[i]);
    g.sync_release_ns = median(std::move(release));
    for (const Wait& w : waits) g.marks[w.mark].blocking = true;
  }

  auto end_of = [&](uint32_t k) { return tl.activities[k].end_ns; };
  std::vector<Edge>& e = g.edges;
  e.reserve(m + 3 * tl.activities.size() + waits.size());
  // The host timeline: the CPU time between consecutive marks; into a
  // blocking call's return only its own cost (the wait is the kHostWait edges).
  for (uint32_t i = 1; i < m; ++i) {
    int64_t seg = g.marks[i].t_ns - g.marks[i - 1].t_ns;
    if (g.marks[i].blocking) seg = std::min(seg, g.sync_release_ns);
    e.push_back({i - 1, i, seg, EdgeKind::kHostOrder});
  }
  for (const Wait& w : waits) {
    const int64_t release = std::min(g.marks[w.mark].t_ns - end_of(w.activity), g.sync_release_ns);
    e.push_back({g.gpu_node(w.activity), w.mark, release, EdgeKind::kHostWait});
  }
  for (uint32_t k = 0; k < tl.activities.size(); ++k) {
    const GpuActivity& a = tl.activities[k];
    const uint32_t v = g.gpu_node(k);
    int64_t explained = INT64_MIN;
    const uint32_t launch = a.launch_row == trace::EventStore::kNoRow ? kNoNode : call_start.find(a.launch_row);
    if (launch != kNoNode && g.marks[launch].t_ns > a.start_ns) {
      ++g.launch_after_start;  // a clock or correlation fault: no causal edge
    } else if (launch != kNoNode) {
      const int64_t w = std::min(a.start_ns - g.marks[launch].t_ns, typ.launch);
      e.push_back({launch, v, w, EdgeKind::kLaunch});
      explained = g.marks[launch].t_ns + w;
    } else {
      // No launch record: tie it to where the host was when it started.
      auto it = std::upper_bound(g.marks.begin(), g.marks.end(), a.start_ns,
                                 [](int64_t t, const HostMark& mk) { return t < mk.t_ns; });
      if (it != g.marks.begin()) {
        const auto anchor = static_cast<uint32_t>(std::prev(it) - g.marks.begin());
        e.push_back({anchor, v, a.start_ns - g.marks[anchor].t_ns, EdgeKind::kAnchor});
        explained = a.start_ns;
      }
    }
    if (const uint32_t p = lanes.prev[k]; p != kNoNode) {
      const int64_t slack = a.start_ns - end_of(p);
      const int64_t w = slack < 0 ? slack : std::min(slack, typ.gap);
      e.push_back({g.gpu_node(p), v, w, EdgeKind::kStream});
      explained = std::max(explained, end_of(p) + w);
    }
    // A start that neither its launch nor its stream explains: work on
    // another stream of the device that ended just before (an event wait).
    if (explained != INT64_MIN && a.start_ns - explained > typ.gap) {
      uint32_t best = kNoNode;
      for (size_t lane = 0; lane < tl.lanes.size(); ++lane) {
        if (lane == a.lane || tl.lanes[lane].device != tl.lanes[a.lane].device) continue;
        const uint32_t b = lanes.last_ended_in(tl, lane, std::max(explained, a.start_ns - kCrossStreamWindowNs), a.start_ns);
        if (b != kNoNode && b < k && (best == kNoNode || end_of(b) > end_of(best))) best = b;
      }
      if (best != kNoNode) e.push_back({g.gpu_node(best), v, a.start_ns - end_of(best), EdgeKind::kCrossStream});
    }
  }

  std::sort(e.begin(), e.end(), [](const Edge& x, const Edge& y) { return x.to != y.to ? x.to < y.to : x.from < y.from; });
  g.in_begin.assign(n + 1, 0);
  for (const Edge& x : e) ++g.in_begin[x.to + 1];
  for (size_t i = 0; i < n; ++i) g.in_begin[i + 1] += g.in_begin[i];

  // Residual: the recorded time past the latest in-edge bound.
  g.residual_ns.assign(n, 0);
  for (uint32_t v = 0; v < n; ++v) {
    int64_t bound = INT64_MIN;
    for (uint32_t i = g.in_begin[v]; i < g.in_begin[v + 1]; ++i) {
      const Edge& x = e[i];
      // As in the replay: work's successors wait for its end.
      const int64_t out =
          g.is_gpu(x.from) ? g.recorded_ns[x.from] + g.gpu_dur_ns[g.activity_of(x.from)] : g.recorded_ns[x.from];
      bound = std::max(bound, out + x.w_ns);
    }
    if (bound != INT64_MIN) g.residual_ns[v] = std::max<int64_t>(0, g.recorded_ns[v] - bound);
  }

  g.order = topological_order(n, e);
  g.cycle_nodes = static_cast<int64_t>(n - g.order.size());
  if (g.cycle_nodes > 0)
    g.notes.push_back(fmt::format("{} nodes lie on dependency cycles (corrupt correlations or clock skew): no replay",
                                  g.cycle_nodes));
  if (g.launch_after_start > 0)
    g.notes.push_back(fmt::format("{} GPU activities start before their launch call (clock skew between host and "
                                  "device): their launch edge is left out",
                                  g.launch_after_start));

  // Steps: their marks and the work they launched.
  const MarkByRow step_start(g.marks, MarkKind::kStepStart), step_end(g.marks, MarkKind::kStepEnd);
  const std::vector<int32_t> step_of = analysis::step_of_activities(tl, steps);
  g.steps.resize(steps.steps.size());
  for (size_t i = 0; i < steps.steps.size(); ++i) {
    g.steps[i].step = steps.steps[i].step;
    g.steps[i].start_mark = step_start.find(steps.steps[i].row);
    g.steps[i].end_mark = step_end.find(steps.steps[i].row);
  }
  for (uint32_t k = 0; k < step_of.size(); ++k)
    if (step_of[k] >= 0) g.steps[static_cast<size_t>(step_of[k])].activities.push_back(k);
  return g;
}

}  // namespace stepscope::whatif
