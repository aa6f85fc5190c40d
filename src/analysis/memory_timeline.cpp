#include "analysis/memory_timeline.h"
#include "analysis/saturating.h"

#include <algorithm>

namespace stepscope::analysis {

MemoryTimelineResult analyze_memory_timeline(const trace::EventStore& store) {
  MemoryTimelineResult r;
  const auto& ev = store.events;
  const trace::StringId k_alloc = store.strings.find("Total Allocated");
  const trace::StringId k_reserved = store.strings.find("Total Reserved");
  const trace::StringId k_bytes = store.strings.find("Bytes");
  const trace::StringId k_dev_id = store.strings.find("Device Id");
  const trace::StringId k_dev_type = store.strings.find("Device Type");
  if (k_alloc == trace::StringTable::kMissing && k_bytes == trace::StringTable::kMissing) {
    // No allocator sample can exist without these keys; still count the instants.
    for (size_t i = 0; i < ev.size(); ++i) r.samples += ev.kind[i] == trace::EventKind::kMemory;
    r.malformed_samples = r.samples;
    return r;
  }
  auto get = [&](size_t i, trace::StringId key) -> std::optional<int64_t> {
    if (auto v = store.arg_int(i, key)) return v;
    if (auto d = store.arg_number(i, key)) return saturating_int64(*d);
    return std::nullopt;
  };
  // Events are in time order, so "first" and "last" samples are in time order too.
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev.kind[i] != trace::EventKind::kMemory) continue;
    ++r.samples;
    auto allocated = get(i, k_alloc);
    auto reserved = get(i, k_reserved);
    if (!allocated || !reserved) {
      ++r.malformed_samples;
      continue;
    }
    const int64_t type = get(i, k_dev_type).value_or(-1);
    const int64_t id = get(i, k_dev_id).value_or(-1);
    auto it = std::find_if(r.devices.begin(), r.devices.end(),
                           [&](const DeviceMemory& d) { return d.device_type == type && d.device_id == id; });
    if (it == r.devices.end()) {
      DeviceMemory d;
      d.device_type = type;
      d.device_id = id;
      d.first_allocated_bytes = *allocated;
      r.devices.push_back(d);
      it = r.devices.end() - 1;
    }
    DeviceMemory& d = *it;
    ++d.samples;
    const int64_t bytes = get(i, k_bytes).value_or(0);
    if (bytes > 0) {
      ++d.alloc_samples;
      d.allocated_bytes_total = saturating_add(d.allocated_bytes_total, bytes);
    } else if (bytes < 0) {
      ++d.free_samples;
      d.freed_bytes_total = saturating_add(d.freed_bytes_total, saturating_negate(bytes));
    }
    if (d.samples == 1 || *allocated > d.peak_allocated_bytes) {
      d.peak_allocated_bytes = *allocated;
      d.peak_allocated_ts_ns = ev.ts_ns[i];
    }
    d.peak_reserved_bytes = std::max(d.peak_reserved_bytes, *reserved);
    d.max_reserved_minus_allocated_bytes = std::max(d.max_reserved_minus_allocated_bytes, *reserved - *allocated);
    d.last_allocated_bytes = *allocated;
  }
  std::sort(r.devices.begin(), r.devices.end(), [](const DeviceMemory& a, const DeviceMemory& b) {
    return a.device_type != b.device_type ? a.device_type < b.device_type : a.device_id < b.device_id;
  });
  return r;
}

}  // namespace stepscope::analysis
