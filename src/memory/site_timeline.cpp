#include "memory/site_timeline.h"

#include <algorithm>
#include <unordered_map>

#include "memory/snapshot_state.h"

namespace stepscope::memory {

using trace::snapshot::BlockState;
using trace::snapshot::MemorySnapshot;
using trace::snapshot::TraceAction;

SiteTimeline site_timeline(const MemorySnapshot& s, const DeviceTimeline& t, size_t top_sites, size_t max_points) {
  const size_t first = t.first_event, last = t.first_event + t.events;
  // The site each event moves bytes for: an alloc its own, a free_completed
  // that of the alloc that made the block (else its own stack's).
  const std::vector<uint32_t> site_of_stack = allocation_sites(s);
  std::vector<uint32_t> site_of(t.events, UINT32_MAX);
  {
    std::unordered_map<uint64_t, uint32_t> live;
    for (size_t e = first; e < last; ++e) {
      const uint32_t own = site_of_stack[s.trace.stack[e]];
      if (s.trace.action[e] == TraceAction::kAlloc) {
        live[s.trace.addr[e]] = own;
        site_of[e - first] = own;
      } else if (s.trace.action[e] == TraceAction::kFreeCompleted) {
        const auto it = live.find(s.trace.addr[e]);
        site_of[e - first] = it != live.end() ? it->second : own;
        if (it != live.end()) live.erase(it);
      }
    }
  }
  // Sites are frame rows or UINT32_MAX (no stack): dense index frames.rows() for the latter.
  const size_t nsites = s.frames.rows() + 1;
  auto dense = [&](uint32_t site) { return site == UINT32_MAX ? nsites - 1 : static_cast<size_t>(site); };
  auto delta = [&](size_t e) -> int64_t {
    const auto size = static_cast<int64_t>(s.trace.size[e]);
    if (s.trace.action[e] == TraceAction::kAlloc) return size;
    if (s.trace.action[e] == TraceAction::kFreeCompleted) return -size;
    return 0;
  };
  // Active bytes per site at the snapshot, then at the start of the history.
  std::vector<int64_t> level(nsites, 0);
  for (size_t b = 0; b < s.blocks.rows(); ++b) {
    const int32_t dev = s.segments.device[s.blocks.segment[b]];
    if ((dev < 0 ? 0 : dev) != t.device) continue;
    if (s.blocks.state[b] != BlockState::kActiveAllocated && s.blocks.state[b] != BlockState::kActivePendingFree)
      continue;
    level[dense(site_of_stack[s.blocks.stack[b]])] += static_cast<int64_t>(s.blocks.size[b]);
  }
  for (size_t e = first; e < last; ++e) level[dense(site_of[e - first])] -= delta(e);
  // Pass 1: each site's own peak; the top sites get bands.
  std::vector<int64_t> peak(nsites), now = level;
  for (size_t i = 0; i < nsites; ++i) peak[i] = std::max<int64_t>(now[i], 0);
  for (size_t e = first; e < last; ++e) {
    const size_t i = dense(site_of[e - first]);
    now[i] += delta(e);
    peak[i] = std::max(peak[i], now[i]);
  }
  std::vector<std::pair<int64_t, uint32_t>> ranked;
  for (size_t i = 0; i < nsites; ++i)
    if (peak[i] > 0) ranked.push_back({peak[i], i + 1 == nsites ? UINT32_MAX : static_cast<uint32_t>(i)});
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  if (ranked.size() > top_sites) ranked.resize(top_sites);
  SiteTimeline out;
  std::vector<size_t> band(nsites, SIZE_MAX);  // by dense site: its band, SIZE_MAX: "other"
  for (const auto& [p, site] : ranked) {
    band[dense(site)] = out.sites.size();
    out.sites.push_back(site);
    out.site_peaks.push_back(static_cast<uint64_t>(p));
  }
  auto band_of = [&](uint32_t site) {
    const size_t b = band[dense(site)];
    return b == SIZE_MAX ? out.sites.size() : b;
  };
  // Pass 2: the bands at the end of each bucket of consecutive events.
  std::vector<int64_t> bands(out.sites.size() + 1, 0);
  for (size_t i = 0; i < nsites; ++i)
    if (level[i] != 0) bands[band_of(i + 1 == nsites ? UINT32_MAX : static_cast<uint32_t>(i))] += level[i];
  auto record = [&](size_t e) {
    std::vector<uint64_t> row(bands.size());
    for (size_t i = 0; i < bands.size(); ++i) row[i] = static_cast<uint64_t>(std::max<int64_t>(bands[i], 0));
    out.events.push_back(e);
    out.time_us.push_back(e < s.trace.rows() ? s.trace.time_us[e] : trace::snapshot::kNoTime);
    out.bytes.push_back(std::move(row));
  };
  const size_t per_bucket = std::max<size_t>(1, (t.events + max_points - 1) / std::max<size_t>(max_points, 1));
  for (size_t k = 0; k < t.events; ++k) {
    const size_t e = first + k;
    bands[band_of(site_of[k])] += delta(e);
    if (k % per_bucket == per_bucket - 1 || k + 1 == t.events) record(e);
  }
  return out;
}

}  // namespace stepscope::memory
