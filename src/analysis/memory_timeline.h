// The caching allocator's footprint over time, from "[memory]" instants
// (recorded with profile_memory=True): peaks per device.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/event_store.h"

namespace stepscope::analysis {

struct DeviceMemory {
  int64_t device_type = -1;         // args "Device Type" (0 = CPU, 1 = CUDA, ...; -1 if absent)
  int64_t device_id = -1;           // args "Device Id" (-1 for CPU)
  int64_t samples = 0;              // [memory] instants for this device
  int64_t alloc_samples = 0;        // samples with Bytes > 0
  int64_t free_samples = 0;         // samples with Bytes < 0
  int64_t allocated_bytes_total = 0;  // sum of positive Bytes, B
  int64_t freed_bytes_total = 0;    // sum of -Bytes over negative samples, B
  int64_t peak_allocated_bytes = 0; // max "Total Allocated", B
  int64_t peak_allocated_ts_ns = 0; // when peak_allocated_bytes was first reached, ns
  int64_t peak_reserved_bytes = 0;  // max "Total Reserved", B
  int64_t max_reserved_minus_allocated_bytes = 0;  // max over samples of Reserved - Allocated (cache slack), B
  int64_t first_allocated_bytes = 0;  // "Total Allocated" at the first sample, B
  int64_t last_allocated_bytes = 0;   // "Total Allocated" at the last sample, B
};

struct MemoryTimelineResult {
  int64_t samples = 0;                 // [memory] instants seen
  int64_t malformed_samples = 0;       // samples missing Total Allocated or Total Reserved
  std::vector<DeviceMemory> devices;   // sorted by (device_type, device_id)
};

MemoryTimelineResult analyze_memory_timeline(const trace::EventStore& store);

}  // namespace stepscope::analysis
