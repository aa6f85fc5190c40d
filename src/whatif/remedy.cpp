#include "whatif/remedy.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "analysis/saturating.h"

namespace stepscope::whatif {

namespace {

// Union of intervals, sorted and disjoint.
std::vector<std::pair<int64_t, int64_t>> normalized(std::vector<std::pair<int64_t, int64_t>> v) {
  std::sort(v.begin(), v.end());
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (!out.empty() && iv.first <= out.back().second) out.back().second = std::max(out.back().second, iv.second);
    else out.push_back(iv);
  }
  return out;
}

// Length of [lo, hi) covered by the disjoint sorted intervals.
int64_t covered(const std::vector<std::pair<int64_t, int64_t>>& set, int64_t lo, int64_t hi) {
  auto it = std::upper_bound(set.begin(), set.end(), std::make_pair(lo, INT64_MAX));
  if (it != set.begin()) --it;
  int64_t sum = 0;
  for (; it != set.end() && it->first < hi; ++it) sum += std::max<int64_t>(0, std::min(hi, it->second) - std::max(lo, it->first));
  return sum;
}

// v * f, rounded; f in [0, 1] keeps it within v's range.
int64_t scaled(int64_t v, double f) {
  const double x = static_cast<double>(v) * f;
  if (!(x < 9.2e18)) return INT64_MAX;
  if (!(x > -9.2e18)) return INT64_MIN + 1;
  return static_cast<int64_t>(std::llround(x));
}

}  // namespace

int64_t fixed_kernel_cost_ns(const analysis::GpuTimeline& tl) {
  std::vector<int64_t> d;
  for (const auto& a : tl.activities)
    if (a.kind == trace::EventKind::kKernel && a.duration_ns() > 0) d.push_back(a.duration_ns());
  if (d.size() < kMinKernelsForFixedCost) return 0;
  auto at = d.begin() + static_cast<std::ptrdiff_t>(d.size() / 100);
  std::nth_element(d.begin(), at, d.end());
  return *at;
}

void Remedy::merge(const Remedy& o) {
  unblock_rows.insert(unblock_rows.end(), o.unblock_rows.begin(), o.unblock_rows.end());
  host_removed.insert(host_removed.end(), o.host_removed.begin(), o.host_removed.end());
  host_scale_excluded.insert(host_scale_excluded.end(), o.host_scale_excluded.begin(), o.host_scale_excluded.end());
  host_time_factor = std::min(host_time_factor, o.host_time_factor);
  gpu_scale.insert(gpu_scale.end(), o.gpu_scale.begin(), o.gpu_scale.end());
  gpu_scale_windows.insert(gpu_scale_windows.end(), o.gpu_scale_windows.begin(), o.gpu_scale_windows.end());
  fused_chains.insert(fused_chains.end(), o.fused_chains.begin(), o.fused_chains.end());
}

ReplayInput apply_remedy(const StepGraph& g, const analysis::GpuTimeline& tl, const Remedy& r, const ReplayInput& base) {
  ReplayInput in = base;
  std::unordered_map<uint32_t, uint32_t> activity_of_row;
  if (!r.gpu_scale.empty() || !r.fused_chains.empty()) {
    activity_of_row.reserve(tl.activities.size());
    for (uint32_t k = 0; k < tl.activities.size(); ++k) activity_of_row.emplace(tl.activities[k].row, k);
  }
  auto activity = [&](uint32_t row) {
    auto it = activity_of_row.find(row);
    return it == activity_of_row.end() ? kNoNode : it->second;
  };

  // GPU work: new durations; a fused chain's first member takes the chain's
  // time less the fixed cost of each kernel it no longer runs (never less
  // than its longest member), the others none, and they follow it at once.
  const int64_t fixed_ns = r.fused_chains.empty() ? 0 : fixed_kernel_cost_ns(tl);
  for (const auto& [row, f] : r.gpu_scale)
    if (uint32_t k = activity(row); k != kNoNode && f >= 0) in.gpu_dur_ns[k] = scaled(in.gpu_dur_ns[k], f);
  for (const Remedy::WindowScale& w : r.gpu_scale_windows) {
    if (w.factor < 0) continue;
    for (uint32_t k = 0; k < tl.activities.size(); ++k) {
      const auto& act = tl.activities[k];
      if (act.cls != analysis::KernelClass::kCommunication && act.start_ns >= w.start_ns && act.start_ns < w.end_ns)
        in.gpu_dur_ns[k] = scaled(in.gpu_dur_ns[k], w.factor);
    }
  }
  std::unordered_set<uint32_t> fused_members;  // GPU nodes after a chain's first
  for (const auto& chain : r.fused_chains) {
    uint32_t first = kNoNode;
    int64_t longest = 0;
    for (uint32_t row : chain) {
      const uint32_t k = activity(row);
      if (k == kNoNode) continue;
      longest = std::max(longest, in.gpu_dur_ns[k]);
      if (first == kNoNode) {
        first = k;
        continue;
      }
      const bool kernel = tl.activities[k].kind == trace::EventKind::kKernel;
      const int64_t kept = kernel ? std::max<int64_t>(0, in.gpu_dur_ns[k] - fixed_ns) : in.gpu_dur_ns[k];
      in.gpu_dur_ns[first] = analysis::saturating_add(in.gpu_dur_ns[first], kept);
      in.gpu_dur_ns[k] = 0;
      in.residual_ns[g.gpu_node(k)] = 0;  // part of one kernel: no delay of its own
      fused_members.insert(g.gpu_node(k));
    }
    if (first != kNoNode) in.gpu_dur_ns[first] = std::max(in.gpu_dur_ns[first], longest);
  }

  const auto removed = normalized(r.host_removed);
  const auto excluded = normalized(r.host_scale_excluded);
  std::unordered_set<uint32_t> unblock(r.unblock_rows.begin(), r.unblock_rows.end());
  // Steps' span on the recorded clock: host scaling applies inside it.
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const auto& s : g.steps) {
    if (s.start_mark != kNoNode) lo = std::min(lo, g.marks[s.start_mark].t_ns);
    if (s.end_mark != kNoNode) hi = std::max(hi, g.marks[s.end_mark].t_ns);
  }
  // Host marks inside a DataLoader span: its CPU time is the data's, not
  // launch overhead, and graph replay does not shrink it.
  std::vector<uint8_t> in_loader;
  if (r.host_time_factor != 1.0) {
    in_loader.assign(g.marks.size(), 0);
    int depth = 0;
    for (size_t i = 0; i < g.marks.size(); ++i) {
      if (g.marks[i].kind == MarkKind::kLoaderStart) ++depth;
      if (g.marks[i].kind == MarkKind::kLoaderEnd && depth > 0) --depth;
      in_loader[i] = depth > 0;
    }
  }
  for (size_t i = 0; i < g.edges.size(); ++i) {
    const Edge& e = g.edges[i];
    if (in.edge_w_ns[i] == kDropped) continue;
    switch (e.kind) {
      case EdgeKind::kHostOrder: {
        const int64_t a = g.marks[e.from].t_ns, b = g.marks[e.to].t_ns;
        int64_t w = in.edge_w_ns[i];
        if (!removed.empty() && b > a) {
          // Remove the covered share of this segment's (possibly already reduced) time.
          const int64_t cut = covered(removed, a, b);
          w = std::max<int64_t>(0, w - scaled(w, static_cast<double>(cut) / static_cast<double>(b - a)));
        }
        if (r.host_time_factor != 1.0 && a >= lo && b <= hi && !in_loader[e.from]) {
          // Scale the part of the segment no other remedy accounts for.
          const double kept = b > a ? static_cast<double>(covered(excluded, a, b)) / static_cast<double>(b - a) : 0.0;
          w = scaled(w, kept + (1.0 - kept) * r.host_time_factor);
        }
        in.edge_w_ns[i] = w;
        break;
      }
      case EdgeKind::kHostWait:
        if (unblock.count(g.marks[e.to].row)) in.edge_w_ns[i] = kDropped;
        break;
      case EdgeKind::kLaunch:
      case EdgeKind::kAnchor:
        if (fused_members.count(e.to)) in.edge_w_ns[i] = kDropped;
        break;
      case EdgeKind::kStream:
        if (fused_members.count(e.to)) in.edge_w_ns[i] = 0;
        break;
      case EdgeKind::kCrossStream:
        break;
    }
  }
  return in;
}

}  // namespace stepscope::whatif
