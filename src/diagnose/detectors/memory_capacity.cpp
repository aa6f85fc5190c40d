// memory_capacity: how close the run is to the device's memory. Peaks come
// from the allocator samples ([memory] instants, profile_memory=True) and the
// device size from deviceProperties. Out-of-memory events, a reserved peak
// above 90% of the device, or a large reserved-but-unallocated slack near
// capacity (fragmentation) are reported. None of these costs step time by
// itself (allocation retries show up under memory_allocator), so the finding
// carries no saving and ranks by severity.
#include <fmt/core.h>


#include "diagnose/detector_support.h"
#include "diagnose/detectors/detectors.h"
#include "diagnose/part_json.h"

namespace stepscope::diagnose {
namespace {

constexpr const char* kName = "memory_capacity";
constexpr double kNearFullPct = 90.0;       // reserved peak at or above: little headroom left
constexpr double kFragmentedPct = 20.0;     // slack (reserved - allocated) as % of the device
constexpr double kFragmentNearPct = 75.0;   // ... matters only when reserved is at least this full

// One device of one rank that is near or over capacity: the numbers its
// finding shows.
struct DeviceAtCapacity {
  int64_t rank = 0;
  int64_t device_id = 0;
  int64_t total = 0;  // device memory, B
  int64_t peak_allocated = 0, peak_reserved = 0, max_slack = 0;
  int64_t oom = 0;                 // out-of-memory events of the rank
  std::vector<Example> first_oom;  // the rank's first out-of-memory event, when it has one
  Example peak;                    // the allocated peak
  bool fragmented = false;
};

struct Part {
  bool any_samples = false, any_size = false;
  std::vector<DeviceAtCapacity> devices;  // rank order
  void merge(const Part& later_rank) {
    any_samples = any_samples || later_rank.any_samples;
    any_size = any_size || later_rank.any_size;
    devices.insert(devices.end(), later_rank.devices.begin(), later_rank.devices.end());
  }
  void set_rank(int64_t rank) {
    for (DeviceAtCapacity& d : devices) {
      d.rank = rank;
      d.peak.rank = rank;
      for (Example& e : d.first_oom) e.rank = rank;
    }
  }
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DeviceAtCapacity, rank, device_id, total, peak_allocated, peak_reserved,
                                   max_slack, oom, first_oom, peak, fragmented)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Part, any_samples, any_size, devices)

Part collect(const RankContext& rc) {
  const RankView& r = *rc.view;
  Part out;
  int64_t oom = 0;
  uint32_t first_oom = trace::EventStore::kNoRow;
  for (uint32_t row = 0; row < r.store->events.size(); ++row) {
    auto k = r.store->events.kind[row];
    if (k != trace::EventKind::kInstant && k != trace::EventKind::kMemory) continue;
    if (r.store->name_of(row).find("OutOfMemory") == std::string_view::npos) continue;
    if (oom++ == 0) first_oom = row;
  }
  for (const auto& dev : r.analysis->memory.devices) {
    if (dev.device_type != 1 || dev.samples == 0) continue;  // CUDA / HIP devices only
    out.any_samples = true;
    int64_t total = 0;
    for (const auto& p : r.store->meta.devices)
      if (p.id == dev.device_id) total = p.total_global_mem;
    if (total <= 0 && r.peaks) total = static_cast<int64_t>(r.peaks->memory_gb * 1e9);
    if (total <= 0) continue;
    out.any_size = true;
    const double reserved_pct = 100.0 * static_cast<double>(dev.peak_reserved_bytes) / static_cast<double>(total);
    const double slack_pct =
        100.0 * static_cast<double>(dev.max_reserved_minus_allocated_bytes) / static_cast<double>(total);
    const bool near_full = reserved_pct >= kNearFullPct;
    const bool fragmented = slack_pct >= kFragmentedPct && reserved_pct >= kFragmentNearPct;
    if (oom == 0 && !near_full && !fragmented) continue;
    DeviceAtCapacity d;
    d.rank = r.store->rank;
    d.device_id = dev.device_id;
    d.total = total;
    d.peak_allocated = dev.peak_allocated_bytes;
    d.peak_reserved = dev.peak_reserved_bytes;
    d.max_slack = dev.max_reserved_minus_allocated_bytes;
    d.oom = oom;
    d.fragmented = fragmented;
    if (first_oom != trace::EventStore::kNoRow) d.first_oom.push_back(example_of_row(r, first_oom, "first out-of-memory event"));
    d.peak.rank = r.store->rank;
    d.peak.ts_ns = dev.peak_allocated_ts_ns;
    d.peak.step = step_number_at(*r.attribution, d.peak.ts_ns);
    d.peak.name = "peak allocated";
    d.peak.detail = fmt::format("{:.2f} GB allocated, device {}", static_cast<double>(dev.peak_allocated_bytes) / 1e9,
                                dev.device_id);
    out.devices.push_back(std::move(d));
  }
  return out;
}

DetectorOutput finish(const Part& part, const JobContext&) {
  DetectorOutput out;
  for (const DeviceAtCapacity& d : part.devices) {
    const double reserved_pct = 100.0 * static_cast<double>(d.peak_reserved) / static_cast<double>(d.total);
    const double slack_pct = 100.0 * static_cast<double>(d.max_slack) / static_cast<double>(d.total);
    Finding f;
    f.category = Category::kMemoryCapacity;
    f.detector = kName;
    f.saves_time = false;
    f.saving_rank = d.rank;
    f.confidence = Confidence::kHigh;
    f.severity = d.oom > 0 ? Severity::kHigh : Severity::kMedium;
    if (d.oom > 0)
      f.title = fmt::format("{} out-of-memory events on rank {}", d.oom, d.rank);
    else if (reserved_pct >= kNearFullPct)
      f.title = fmt::format("Reserved memory peaks at {:.0f}% of the {:.1f} GB device on rank {}", reserved_pct,
                            static_cast<double>(d.total) / 1e9, d.rank);
    else
      f.title = fmt::format("{:.0f}% of device memory reserved but unallocated (fragmentation) at {:.0f}% "
                            "reserved on rank {}",
                            slack_pct, reserved_pct, d.rank);
    auto& m = f.evidence.metrics;
    m.push_back({"device_memory_bytes", static_cast<double>(d.total), "B"});
    m.push_back({"peak_allocated_bytes", static_cast<double>(d.peak_allocated), "B"});
    m.push_back({"peak_reserved_bytes", static_cast<double>(d.peak_reserved), "B"});
    m.push_back({"peak_reserved_pct_of_device", reserved_pct, "%"});
    m.push_back({"max_reserved_minus_allocated_bytes", static_cast<double>(d.max_slack), "B"});
    m.push_back({"out_of_memory_events", static_cast<double>(d.oom), "count"});
    for (const Example& e : d.first_oom) f.evidence.examples.push_back(e);
    f.evidence.examples.push_back(d.peak);
    f.remedy = "Lower peak memory: activation checkpointing (torch.utils.checkpoint), a smaller micro-batch with "
               "gradient accumulation, bf16 parameters and optimizer states, or sharding (FSDP / ZeRO)";
    if (d.fragmented) f.remedy += "; against fragmentation set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True";
    f.remedy += ".";
    out.findings.push_back(std::move(f));
  }
  if (!part.any_samples)
    out.not_assessed.push_back({kName, "peak allocated / reserved memory and fragmentation",
                                "no allocator samples in the trace (profile with profile_memory=True)"});
  else if (!part.any_size)
    out.not_assessed.push_back({kName, "memory headroom",
                                "device memory size unknown (no deviceProperties totalGlobalMem and GPU not in the "
                                "hardware table)"});
  return out;
}

}  // namespace

Detector memory_capacity_detector() { return split_detector<Part>(kName, Category::kMemoryCapacity, collect, finish); }

}  // namespace stepscope::diagnose
