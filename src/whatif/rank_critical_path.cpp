#include "whatif/rank_critical_path.h"

#include <algorithm>

#include "analysis/saturating.h"

namespace stepscope::whatif {

namespace {

std::string_view gpu_kind(trace::EventKind k) {
  switch (k) {
    case trace::EventKind::kMemcpy: return "memcpy";
    case trace::EventKind::kMemset: return "memset";
    default: return "kernel";
  }
}

std::string describe(const trace::EventStore& store, const HostMark& m) {
  std::string name(store.name_of(m.row));
  switch (m.kind) {
    case MarkKind::kCallStart:
    case MarkKind::kStepStart:
    case MarkKind::kLoaderStart: return name + " start";
    default: return name + " end";
  }
}

// The innermost CPU op of thread `tid` that covers [s, e]: ops of one thread
// nest, so the covering op that started last is the innermost. Looks back a
// bounded number of ops (only the few longest segments are named).
const uint32_t* innermost_op(const trace::EventStore& store, int64_t tid, int64_t s, int64_t e) {
  const auto& rows = store.cpu_op_rows;
  const auto& ev = store.events;
  auto it = std::upper_bound(rows.begin(), rows.end(), s, [&](int64_t t, uint32_t r) { return t < ev.ts_ns[r]; });
  for (int back = 0; back < 4096 && it != rows.begin(); ++back) {
    --it;
    if (ev.tid[*it] == tid && ev.ts_ns[*it] + ev.dur_ns[*it] >= e) return &*it;
  }
  return nullptr;
}

NamedSegment name_segment(const StepGraph& g, const analysis::GpuTimeline& tl, const trace::EventStore& store,
                          const PathSegment& s) {
  NamedSegment n;
  n.category = s.category;
  n.start_ns = s.start_ns;
  n.dur_ns = s.dur_ns();
  auto gpu_name = [&](uint32_t node) { return std::string(store.strings.get(tl.activities[g.activity_of(node)].name)); };
  if (s.kind == SegmentKind::kGpuWork) {
    n.kind = gpu_kind(tl.activities[g.activity_of(s.node)].kind);
    n.name = gpu_name(s.node);
    return n;
  }
  if (s.kind == SegmentKind::kResidual) {
    n.kind = "residual";
    n.name = g.is_gpu(s.node) ? gpu_name(s.node) : describe(store, g.marks[s.node]);
    return n;
  }
  const Edge& e = g.edges[s.edge];
  n.kind = to_string(e.kind);
  if (e.kind != EdgeKind::kHostOrder) {
    // Launches, stream gaps and waits are named after the GPU work they
    // hold back; a sync's release after the call that waited.
    n.name = g.is_gpu(e.to) ? gpu_name(e.to) : std::string(store.name_of(g.marks[e.to].row));
    return n;
  }
  const HostMark& from = g.marks[e.from];
  const HostMark& to = g.marks[e.to];
  if (s.category == PathCategory::kHostRuntime && to.kind == MarkKind::kCallEnd) {
    n.name = store.name_of(to.row);
  } else if (s.category == PathCategory::kHostRuntime && from.kind == MarkKind::kCallStart) {
    n.name = store.name_of(from.row);
  } else if (const uint32_t* op = innermost_op(store, store.events.tid[to.row], s.start_ns, s.end_ns)) {
    n.name = store.name_of(*op);
  } else {
    n.name = describe(store, from) + " -> " + describe(store, to);
  }
  return n;
}

}  // namespace

RankCriticalPath summarize_critical_path(int64_t rank, const StepGraph& g, const analysis::GpuTimeline& tl,
                                         const trace::EventStore& store) {
  RankCriticalPath out;
  out.rank = rank;
  if (!g.usable()) {
    out.notes.push_back("no critical path: the replay graph is not usable (see the replay's notes)");
    return out;
  }
  const ReplayInput in = recorded_input(g);
  const ReplayResult r = replay(g, in);
  for (const StepPath& p : critical_paths(g, in, r, tl)) {
    StepCriticalPath s;
    s.step = p.step;
    s.start_ns = p.start_ns;
    s.end_ns = p.end_ns;
    s.by_category_ns = p.by_category_ns;
    for (const PathSegment& seg : p.segments) {
      int32_t device = -1;
      int64_t stream = -1;
      if (seg.kind == SegmentKind::kGpuWork) {
        const analysis::Lane& lane = tl.lanes[tl.activities[g.activity_of(seg.node)].lane];
        device = lane.device;
        stream = lane.stream;
      }
      if (!s.spans.empty() && s.spans.back().category == seg.category && s.spans.back().device == device &&
          s.spans.back().stream == stream && s.spans.back().end_ns == seg.start_ns)
        s.spans.back().end_ns = seg.end_ns;
      else
        s.spans.push_back({seg.start_ns, seg.end_ns, seg.category, device, stream});
    }
    std::vector<const PathSegment*> longest;
    for (const PathSegment& seg : p.segments) longest.push_back(&seg);
    const size_t top = std::min(kTopPathSegments, longest.size());
    std::partial_sort(longest.begin(), longest.begin() + static_cast<std::ptrdiff_t>(top), longest.end(),
                      [](const PathSegment* a, const PathSegment* b) {
                        return a->dur_ns() != b->dur_ns() ? a->dur_ns() > b->dur_ns() : a->start_ns < b->start_ns;
                      });
    for (size_t i = 0; i < top; ++i) s.top.push_back(name_segment(g, tl, store, *longest[i]));
    for (int c = 0; c < kPathCategoryCount; ++c)
      out.total_ns[static_cast<size_t>(c)] = analysis::saturating_add(out.total_ns[static_cast<size_t>(c)], s.by_category_ns[static_cast<size_t>(c)]);
    out.wall_ns = analysis::saturating_add(out.wall_ns, s.wall_ns());
    out.steps.push_back(std::move(s));
  }
  if (g.steps.empty()) out.notes.push_back("no ProfilerStep#N in the trace: no step window to follow a critical path through");
  return out;
}

}  // namespace stepscope::whatif
