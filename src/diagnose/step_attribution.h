// Where each step's wall time went: every nanosecond of a step window is put
// in exactly one bucket, so the buckets sum to the step time. The GPU decides
// first (what runs, by priority); when nothing runs, the host decides (why no
// work was there). Rules: docs/metrics.md, "Step-time attribution".
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/gpu_timeline.h"
#include "analysis/steps.h"
#include "diagnose/host_index.h"
#include "trace/event_store.h"

namespace stepscope::diagnose {

enum class Bucket : uint8_t {
  kComputeTensorCore,  // a tensor-core matmul (GEMM, attention, convolution) runs
  kComputeSimtMatmul,  // else a matmul on the SIMT/FFMA path runs (not effective compute)
  kComputeOther,       // else another computation kernel runs (elementwise, norm, reduction, Triton, ...)
  kCommunication,      // else a collective / P2P kernel runs: exposed communication
  kMemoryCopy,         // else a memcpy / memset runs: exposed copy
  kDataPipeline,       // GPU idle while the host is inside a DataLoader __next__
  kHostSync,           // GPU idle in a gap that opened while the host was blocked in a sync
  kAllocator,          // GPU idle during cudaMalloc/cudaFree, or in a gap a cudaFree's implicit sync opened
  kHostOverhead,       // GPU idle until the host submits the next work (launch / framework time)
  kOtherIdle,          // GPU idle with its next work already submitted (dependencies), unknown cause, or device sync work
};
constexpr int kBucketCount = 10;

std::string_view to_string(Bucket b);  // "compute_tensor_core", ..., "other_idle"
constexpr bool is_idle(Bucket b) { return b >= Bucket::kDataPipeline; }
// Effective compute: tensor-core matmuls and other computation (not SIMT matmuls).
constexpr bool is_effective_compute(Bucket b) {
  return b == Bucket::kComputeTensorCore || b == Bucket::kComputeOther;
}

// One stretch of non-compute time inside a step window.
struct BucketSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  Bucket bucket = Bucket::kOtherIdle;
  // The host row that explains it: the DataLoader span, the allocator or
  // sync call, or (host_overhead) the launch of the GPU work that ended the
  // gap. kNoRow when none.
  uint32_t cause_row = trace::EventStore::kNoRow;
  uint32_t step_index = 0;  // index into RankAttribution::steps
};

// Invariant: sum(ns) == end_ns - start_ns.
struct StepAttribution {
  int64_t step = -1;      // N of ProfilerStep#N; -1 for the whole-trace window
  int64_t start_ns = 0;   // window start, ns (trace clock)
  int64_t end_ns = 0;     // window end, ns
  std::array<int64_t, kBucketCount> ns{};  // time per bucket, indexed by Bucket, ns

  int64_t wall_ns() const { return end_ns - start_ns; }
  int64_t of(Bucket b) const { return ns[static_cast<size_t>(b)]; }
  double pct(Bucket b) const { return wall_ns() > 0 ? 100.0 * static_cast<double>(of(b)) / static_cast<double>(wall_ns()) : 0.0; }
  int64_t effective_compute_ns() const { return of(Bucket::kComputeTensorCore) + of(Bucket::kComputeOther); }
  int64_t idle_ns() const;
};

struct RankAttribution {
  int64_t rank = 0;
  // True when the windows are ProfilerStep spans; false when the trace has
  // none and the one window is the GPU's whole active span.
  bool from_profiler_steps = false;
  // False when the rank's trace has no GPU activity (a CPU-only profile):
  // then every window is one idle gap and the buckets say nothing.
  bool gpu_activity = false;
  std::vector<StepAttribution> steps;  // in time order
  std::vector<BucketSpan> spans;       // non-compute spans (communication, copies, idle), in time order
  StepAttribution total;               // sum over steps; start = first window start, wall = sum of windows

  // Mean window length over steps, ns (0 without steps).
  int64_t mean_step_ns() const;
};

// Window of step i: from its CPU start to the next step's CPU start (its own
// CPU end when that is earlier); the last step extends to the end of the GPU
// work launched in it, so queued work is not cut off.
RankAttribution attribute_steps(const trace::EventStore& store, const analysis::GpuTimeline& timeline,
                                const analysis::StepsResult& steps, const HostIndex& host);

}  // namespace stepscope::diagnose
