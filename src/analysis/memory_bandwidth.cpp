#include "analysis/memory_bandwidth.h"
#include "analysis/saturating.h"

#include <algorithm>
#include <unordered_map>

namespace stepscope::analysis {
namespace {

// Kineto names copies "Memcpy <dir> (<src> -> <dst>)" and sets "Memset (<dst>)".
CopyDirection direction_of(std::string_view name, trace::EventKind kind) {
  if (kind == trace::EventKind::kMemset || name.starts_with("Memset")) return CopyDirection::kMemset;
  struct Rule {
    std::string_view token;
    CopyDirection dir;
  };
  static constexpr Rule kRules[] = {
      {"HtoD", CopyDirection::kHtoD}, {"DtoH", CopyDirection::kDtoH}, {"DtoD", CopyDirection::kDtoD},
      {"HtoH", CopyDirection::kHtoH}, {"PtoP", CopyDirection::kPtoP},
  };
  for (const auto& r : kRules) {
    if (name.find(r.token) != std::string_view::npos) return r.dir;
  }
  return CopyDirection::kUnknown;
}

HostMemory host_memory_of(std::string_view name, CopyDirection dir) {
  if (name.find("Pageable") != std::string_view::npos) return HostMemory::kPageable;
  if (name.find("Pinned") != std::string_view::npos) return HostMemory::kPinned;
  if (dir == CopyDirection::kDtoD || dir == CopyDirection::kPtoP || dir == CopyDirection::kMemset)
    return HostMemory::kNone;
  return HostMemory::kUnknown;
}

struct Group {
  trace::StringId name = 0;
  trace::EventKind kind = trace::EventKind::kMemcpy;
  CopyKindStats stats;
  std::vector<double> gbps;
};

}  // namespace

MemoryBandwidthResult analyze_memory_bandwidth(const trace::EventStore& store, const GpuTimeline& timeline) {
  MemoryBandwidthResult r;
  const trace::StringId bytes_key = store.strings.find("bytes");
  std::vector<Group> groups;
  std::unordered_map<trace::StringId, size_t> group_of_name;
  for (const GpuActivity& a : timeline.activities) {
    if (a.kind != trace::EventKind::kMemcpy && a.kind != trace::EventKind::kMemset) continue;
    auto [it, inserted] = group_of_name.emplace(a.name, groups.size());
    if (inserted) groups.push_back({a.name, a.kind, {}, {}});
    Group& g = groups[it->second];
    ++g.stats.count;
    std::optional<int64_t> bytes = store.arg_int(a.row, bytes_key);
    if (!bytes) {
      if (auto d = store.arg_number(a.row, bytes_key)) bytes = saturating_int64(*d);
    }
    if (!bytes) continue;
    const int64_t dur = a.duration_ns();
    ++g.stats.with_bytes;
    g.stats.bytes = saturating_add(g.stats.bytes, *bytes);
    g.stats.time_ns = saturating_add(g.stats.time_ns, dur);
    // bytes per ns is GB/s (1e9 B per 1e9 ns).
    if (dur > 0) g.gbps.push_back(static_cast<double>(*bytes) / static_cast<double>(dur));
  }
  for (auto& g : groups) {
    CopyKindStats s = g.stats;
    s.name = std::string(store.strings.get(g.name));
    s.direction = direction_of(s.name, g.kind);
    s.host_memory = host_memory_of(s.name, s.direction);
    s.achieved_gbps = s.time_ns > 0 ? static_cast<double>(s.bytes) / static_cast<double>(s.time_ns) : 0.0;
    s.per_op_gbps = summarize(g.gbps);
    r.total_bytes = saturating_add(r.total_bytes, s.bytes);
    r.total_time_ns = saturating_add(r.total_time_ns, s.time_ns);
    r.kinds.push_back(std::move(s));
  }
  std::stable_sort(r.kinds.begin(), r.kinds.end(), [](const CopyKindStats& a, const CopyKindStats& b) {
    return a.time_ns != b.time_ns ? a.time_ns > b.time_ns : a.name < b.name;
  });
  return r;
}

std::string_view to_string(CopyDirection d) {
  switch (d) {
    case CopyDirection::kHtoD: return "HtoD";
    case CopyDirection::kDtoH: return "DtoH";
    case CopyDirection::kDtoD: return "DtoD";
    case CopyDirection::kHtoH: return "HtoH";
    case CopyDirection::kPtoP: return "PtoP";
    case CopyDirection::kMemset: return "Memset";
    case CopyDirection::kUnknown: return "unknown";
  }
  return "unknown";
}

std::string_view to_string(HostMemory h) {
  switch (h) {
    case HostMemory::kPageable: return "pageable";
    case HostMemory::kPinned: return "pinned";
    case HostMemory::kNone: return "none";
    case HostMemory::kUnknown: return "unknown";
  }
  return "unknown";
}

}  // namespace stepscope::analysis
