#include "whatif/critical_path.h"

#include <algorithm>

#include "analysis/saturating.h"

namespace stepscope::whatif {

using analysis::saturating_add;

std::string_view to_string(PathCategory c) {
  switch (c) {
    case PathCategory::kHostRuntime: return "host_runtime";
    case PathCategory::kHostOther: return "host_other";
    case PathCategory::kDataLoader: return "dataloader";
    case PathCategory::kLaunch: return "launch";
    case PathCategory::kGpuCompute: return "gpu_compute";
    case PathCategory::kGpuMemory: return "gpu_memory";
    case PathCategory::kGpuCommunication: return "gpu_communication";
    case PathCategory::kStreamWait: return "stream_wait";
    case PathCategory::kSync: return "sync";
    case PathCategory::kResidual: return "residual";
  }
  return "unknown";
}

std::vector<PathCategory> host_categories(const StepGraph& g) {
  std::vector<PathCategory> cat(g.mark_count(), PathCategory::kHostOther);
  // Open calls and DataLoader spans after each mark; marks at one time put
  // ends before starts, so a call that returns as the next starts is closed.
  int64_t calls = 0, loaders = 0;
  for (size_t i = 0; i < g.mark_count(); ++i) {
    if (i > 0) cat[i] = loaders > 0 ? PathCategory::kDataLoader : calls > 0 ? PathCategory::kHostRuntime : PathCategory::kHostOther;
    switch (g.marks[i].kind) {
      case MarkKind::kCallStart: ++calls; break;
      case MarkKind::kCallEnd: calls = std::max<int64_t>(0, calls - 1); break;
      case MarkKind::kLoaderStart: ++loaders; break;
      case MarkKind::kLoaderEnd: loaders = std::max<int64_t>(0, loaders - 1); break;
      default: break;
    }
  }
  return cat;
}

PathCategory gpu_category(analysis::KernelClass c) {
  switch (c) {
    case analysis::KernelClass::kComputation: return PathCategory::kGpuCompute;
    case analysis::KernelClass::kCommunication: return PathCategory::kGpuCommunication;
    case analysis::KernelClass::kMemory: return PathCategory::kGpuMemory;
    case analysis::KernelClass::kOther: return PathCategory::kStreamWait;  // device-side sync drawn as work
  }
  return PathCategory::kGpuCompute;
}

PathCategory edge_category(EdgeKind kind, PathCategory host_stretch) {
  switch (kind) {
    case EdgeKind::kHostOrder: return host_stretch;
    case EdgeKind::kLaunch:
    case EdgeKind::kAnchor: return PathCategory::kLaunch;
    case EdgeKind::kStream:
    case EdgeKind::kCrossStream: return PathCategory::kStreamWait;
    case EdgeKind::kHostWait: return PathCategory::kSync;
  }
  return PathCategory::kResidual;
}

std::vector<StepPath> critical_paths(const StepGraph& g, const ReplayInput& in, const ReplayResult& r,
                                     const analysis::GpuTimeline& tl) {
  const std::vector<PathCategory> host = host_categories(g);
  // Where a node's successors leave from: a mark's time, GPU work's end.
  auto out_of = [&](uint32_t u) {
    return g.is_gpu(u) ? saturating_add(r.time_ns[u], in.gpu_dur_ns[g.activity_of(u)]) : r.time_ns[u];
  };
  std::vector<StepPath> paths;
  for (const EndedWindow& ew : step_windows_with_ends(g, r.time_ns, in.gpu_dur_ns)) {
    const StepWindow& w = ew.window;
    StepPath p;
    p.step = w.step;
    p.start_ns = w.start_ns;
    p.end_ns = w.end_ns;
    // Walking back, each segment runs from its natural start (clipped to the
    // window) to where the previous one began: the segments tile the window
    // even where an edge's weight is negative (work that overlapped its
    // predecessor on a stream) and the part already covered is not counted twice.
    int64_t cur = w.end_ns;
    auto emit = [&](int64_t lo, SegmentKind kind, PathCategory cat, uint32_t node, uint32_t edge) {
      lo = std::max(lo, w.start_ns);
      if (lo >= cur) return;
      p.segments.push_back({lo, cur, kind, cat, node, edge});
      cur = lo;
    };
    uint32_t v = ew.end_node;
    while (cur > w.start_ns) {
      if (g.is_gpu(v)) {
        const analysis::GpuActivity& a = tl.activities[g.activity_of(v)];
        emit(r.time_ns[v], SegmentKind::kGpuWork, gpu_category(a.cls), v, kNoEdge);
      }
      if (cur <= w.start_ns) break;
      const uint32_t e = r.binding[v];
      if (e == kNoEdge) {  // a root: nothing in the graph explains the time before it
        emit(w.start_ns, SegmentKind::kResidual, PathCategory::kResidual, v, kNoEdge);
        break;
      }
      const Edge& edge = g.edges[e];
      const int64_t from = out_of(edge.from);
      emit(saturating_add(from, in.edge_w_ns[e]), SegmentKind::kResidual, PathCategory::kResidual, v, kNoEdge);
      // Only a host_order edge ends at a mark; the others' targets are GPU nodes.
      const PathCategory stretch = edge.kind == EdgeKind::kHostOrder ? host[edge.to] : PathCategory::kResidual;
      emit(from, SegmentKind::kEdge, edge_category(edge.kind, stretch), v, e);
      v = edge.from;
    }
    std::reverse(p.segments.begin(), p.segments.end());
    for (const PathSegment& s : p.segments)
      p.by_category_ns[static_cast<size_t>(s.category)] += s.dur_ns();
    paths.push_back(std::move(p));
  }
  return paths;
}

}  // namespace stepscope::whatif
