// Copy bandwidth per kind and the allocator timeline, by hand and on the
// shared traces that recorded memory.
#include <gtest/gtest.h>

#include "analysis/memory_bandwidth.h"
#include "analysis/memory_timeline.h"
#include "analysis/rank_analysis.h"
#include "analysis_fixtures.h"

namespace stepscope::analysis {
namespace {

using namespace testing_support;

std::string memory_sample(int64_t ts_ns, int64_t bytes, int64_t allocated, int64_t reserved, int device_type,
                          int device_id) {
  return R"({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": )" +
         us_text(ts_ns) + R"(, "args": {"Total Reserved": )" + std::to_string(reserved) +
         R"(, "Total Allocated": )" + std::to_string(allocated) + R"(, "Bytes": )" + std::to_string(bytes) +
         R"(, "Device Id": )" + std::to_string(device_id) + R"(, "Device Type": )" +
         std::to_string(device_type) + "}}";
}

TEST(MemoryBandwidth, PerKindByHand) {
  auto store = load_inline({
      kernel("Memcpy HtoD (Pageable -> Device)", 0, 1000, 7, -1, "gpu_memcpy", R"("bytes": 1000000)"),
      kernel("Memcpy HtoD (Pageable -> Device)", 2000, 3000, 7, -1, "gpu_memcpy", R"("bytes": 1000000)"),
      kernel("Memcpy DtoH (Device -> Pinned)", 6000, 500, 7, -1, "gpu_memcpy", R"("bytes": 4000)"),
      kernel("Memcpy DtoD (Device -> Device)", 7000, 500, 7, -1, "gpu_memcpy"),  // no bytes
      kernel("Memset (Device)", 8000, 0, 7, -1, "gpu_memset", R"("bytes": 64)"),
      kernel("sgemm", 9000, 100, 7, -1),
  });
  MemoryBandwidthResult r = analyze_memory_bandwidth(*store, build_gpu_timeline(*store, AnalysisOptions{}));
  ASSERT_EQ(r.kinds.size(), 4u);
  const CopyKindStats& h2d = r.kinds[0];  // most time
  EXPECT_EQ(h2d.name, "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(h2d.direction, CopyDirection::kHtoD);
  EXPECT_EQ(h2d.host_memory, HostMemory::kPageable);
  EXPECT_EQ(h2d.count, 2);
  EXPECT_EQ(h2d.bytes, 2000000);
  EXPECT_EQ(h2d.time_ns, 4000);
  EXPECT_DOUBLE_EQ(h2d.achieved_gbps, 500.0);  // 2e6 B / 4e3 ns
  EXPECT_DOUBLE_EQ(h2d.per_op_gbps.max, 1000.0);
  EXPECT_NEAR(h2d.per_op_gbps.min, 1e6 / 3000.0, 1e-9);
  const auto find = [&](std::string_view name) {
    return *std::find_if(r.kinds.begin(), r.kinds.end(), [&](const CopyKindStats& k) { return k.name == name; });
  };
  const CopyKindStats d2h = find("Memcpy DtoH (Device -> Pinned)");
  EXPECT_EQ(d2h.direction, CopyDirection::kDtoH);
  EXPECT_EQ(d2h.host_memory, HostMemory::kPinned);
  EXPECT_DOUBLE_EQ(d2h.achieved_gbps, 8.0);
  const CopyKindStats d2d = find("Memcpy DtoD (Device -> Device)");
  EXPECT_EQ(d2d.host_memory, HostMemory::kNone);
  EXPECT_EQ(d2d.count, 1);
  EXPECT_EQ(d2d.with_bytes, 0);
  EXPECT_EQ(d2d.achieved_gbps, 0.0);
  const CopyKindStats set = find("Memset (Device)");
  EXPECT_EQ(set.direction, CopyDirection::kMemset);
  EXPECT_EQ(set.per_op_gbps.count, 0);  // zero duration: no rate
  EXPECT_EQ(r.total_bytes, 2000000 + 4000 + 64);
}

TEST(MemoryTimeline, PeaksByHand) {
  auto store = load_inline({
      memory_sample(100, 1000, 1000, 4096, 1, 0),
      memory_sample(200, 3000, 4000, 8192, 1, 0),
      memory_sample(300, -1000, 3000, 8192, 1, 0),
      memory_sample(400, 512, 512, 0, 0, -1),
      memory_sample(500, -3000, 0, 8192, 1, 0),
  });
  MemoryTimelineResult r = analyze_memory_timeline(*store);
  EXPECT_EQ(r.samples, 5);
  EXPECT_EQ(r.malformed_samples, 0);
  ASSERT_EQ(r.devices.size(), 2u);
  const DeviceMemory& cpu = r.devices[0];
  EXPECT_EQ(cpu.device_type, 0);
  EXPECT_EQ(cpu.device_id, -1);
  EXPECT_EQ(cpu.samples, 1);
  const DeviceMemory& gpu = r.devices[1];
  EXPECT_EQ(gpu.device_type, 1);
  EXPECT_EQ(gpu.device_id, 0);
  EXPECT_EQ(gpu.samples, 4);
  EXPECT_EQ(gpu.alloc_samples, 2);
  EXPECT_EQ(gpu.free_samples, 2);
  EXPECT_EQ(gpu.allocated_bytes_total, 4000);
  EXPECT_EQ(gpu.freed_bytes_total, 4000);
  EXPECT_EQ(gpu.peak_allocated_bytes, 4000);
  EXPECT_EQ(gpu.peak_allocated_ts_ns, 200);
  EXPECT_EQ(gpu.peak_reserved_bytes, 8192);
  EXPECT_EQ(gpu.max_reserved_minus_allocated_bytes, 8192);
  EXPECT_EQ(gpu.first_allocated_bytes, 1000);
  EXPECT_EQ(gpu.last_allocated_bytes, 0);
}

TEST(MemoryTimeline, H200TraceWithProfileMemory) {
  SKIP_WITHOUT_SHARED();
  trace::LoadResult lr = load_shared("traces/h200/gpt_baseline_bf16");
  RankAnalysis a = analyze_rank(*lr.set.ranks.at(0), AnalysisOptions{});
  // The trace holds 14744 [memory] samples: 14352 on cuda:0, 392 on the CPU.
  EXPECT_EQ(a.memory.samples, 14744);
  EXPECT_EQ(a.memory.malformed_samples, 0);
  ASSERT_EQ(a.memory.devices.size(), 2u);
  const DeviceMemory& gpu = a.memory.devices[1];
  EXPECT_EQ(gpu.device_type, 1);
  EXPECT_EQ(gpu.samples, 14352);
  EXPECT_EQ(gpu.alloc_samples + gpu.free_samples, gpu.samples);
  EXPECT_GE(gpu.peak_reserved_bytes, gpu.peak_allocated_bytes);
  // Computed independently from the JSON (max over the cuda:0 samples).
  EXPECT_EQ(gpu.peak_allocated_bytes, 10996864000);
  EXPECT_EQ(gpu.peak_reserved_bytes, 11389632512);
  EXPECT_EQ(gpu.max_reserved_minus_allocated_bytes, 8719654912);
  EXPECT_EQ(gpu.alloc_samples, 7176);
}

}  // namespace
}  // namespace stepscope::analysis
