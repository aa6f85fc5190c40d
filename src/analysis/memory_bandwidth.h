// Achieved bandwidth of memcpy / memset activities per copy kind (HTA's memory
// bandwidth summary, exact bytes over exact ns).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/distribution.h"
#include "analysis/gpu_timeline.h"

namespace stepscope::analysis {

enum class CopyDirection : uint8_t { kHtoD, kDtoH, kDtoD, kHtoH, kPtoP, kMemset, kUnknown };
// Host side of a copy, from the name's "(Pageable -> Device)" / "(Pinned -> Device)" part.
enum class HostMemory : uint8_t { kPageable, kPinned, kNone, kUnknown };

struct CopyKindStats {
  std::string name;               // activity name, e.g. "Memcpy HtoD (Pageable -> Device)"
  CopyDirection direction = CopyDirection::kUnknown;
  HostMemory host_memory = HostMemory::kUnknown;  // kNone for device-only copies and memsets
  int64_t count = 0;              // activities
  int64_t with_bytes = 0;         // activities that carry args "bytes"
  int64_t bytes = 0;              // sum of args "bytes", B
  int64_t time_ns = 0;            // sum of durations of activities with bytes, ns
  double achieved_gbps = 0;       // bytes / time_ns (= GB/s with GB = 1e9 B); 0 when time is 0
  Distribution per_op_gbps;       // bytes / duration of each activity with bytes and duration > 0, GB/s
};

struct MemoryBandwidthResult {
  std::vector<CopyKindStats> kinds;  // by total time descending
  int64_t total_bytes = 0;           // over all kinds, B
  int64_t total_time_ns = 0;         // sum of time_ns over all kinds, ns
};

MemoryBandwidthResult analyze_memory_bandwidth(const trace::EventStore& store, const GpuTimeline& timeline);

std::string_view to_string(CopyDirection d);  // "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "Memset", "unknown"
std::string_view to_string(HostMemory h);     // "pageable", "pinned", "none", "unknown"

}  // namespace stepscope::analysis
