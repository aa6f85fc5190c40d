// What `stepscope bench` measured on one machine: the hardware profile that
// `plan --profile` and `analyze --profile` read. docs/hardware_profile.md
// documents every field of its JSON form (written by hwbench/profile_json.h,
// read by model/hardware_profile_json.h) with units.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stepscope::model {

// The version of the profile's "stepscope_bench" section that this stepscope
// writes and reads.
inline constexpr int kProfileSchemaVersion = 1;

// The GPU the numbers belong to, as the CUDA runtime reports it.
struct DeviceInfo {
  std::string name;             // cudaDeviceProp::name, e.g. "NVIDIA H200"
  int index = 0;                // CUDA device ordinal measured
  int visible_gpus = 0;         // cudaGetDeviceCount
  int compute_major = 0, compute_minor = 0;
  int sms = 0;                  // streaming multiprocessors
  int64_t memory_bytes = 0;     // total device memory, B
  int64_t l2_bytes = 0;         // L2 cache, B
  int sm_clock_mhz = 0;         // cudaDevAttrClockRate / 1000 (max boost clock)
  int memory_clock_mhz = 0;     // cudaDevAttrMemoryClockRate / 1000
  int memory_bus_bits = 0;      // cudaDevAttrGlobalMemoryBusWidth
  int driver_version = 0;       // cudaDriverGetVersion, e.g. 13000
  int runtime_version = 0;      // cudaRuntimeGetVersion
  int64_t cublaslt_version = 0; // cublasLtGetVersion
  int nccl_version = 0;         // ncclGetVersion (0: built without NCCL)
};

// One timed cuBLASLt matmul D = A·B (m×k by k×n), best algorithm tried.
struct GemmResult {
  std::string dtype;            // bf16 | fp16 | fp8 (e4m3 in, bf16 out) | tf32 | fp32
  int64_t m = 0, n = 0, k = 0;
  double seconds = 0;           // median of the timed repeats
  double tflops = 0;            // 2·m·n·k / seconds / 1e12
};

// A bandwidth: bytes moved per timed region over its median time.
struct BandwidthResult {
  std::string name;             // e.g. hbm_copy (memory_gbps) or h2d_pinned (host_copy_gbps)
  double bytes = 0;             // bytes counted per timed region (copy: read + written)
  double seconds = 0;           // median time of one region
  double gbps = 0;              // bytes / seconds / 1e9
};

// A latency, µs.
struct LatencyResult {
  std::string name;             // stream_roundtrip | enqueue | back_to_back | graph_replay
  double us = 0;
};

// One message size of one collective (nccl-tests' definitions).
struct CollectivePoint {
  int64_t bytes = 0;            // nccl-tests "size": bytes of the whole (largest) buffer
  double seconds = 0;           // median time of one call
  double algbw_gbps = 0;        // bytes / seconds / 1e9
  double busbw_gbps = 0;        // algbw × the collective's bus factor (collective_bandwidth.h)
  int64_t wrong = 0;            // elements off the expected result (checked sizes only; -1: not checked)
};

// t(bytes) = α + bytes / β fitted by least squares over one size range.
struct AlphaBetaFit {
  std::string range;            // nominal NCCL protocol range: ll | ll128 | simple
  int64_t min_bytes = 0, max_bytes = 0;  // the sizes fitted, inclusive
  int points = 0;
  double alpha_us = 0;          // fixed cost, µs
  double beta_gbps = 0;         // asymptotic algorithm bandwidth, GB/s (0: time did not grow with size)
  double r2 = 0;                // coefficient of determination of the fit
};

struct CollectiveResult {
  std::string name;             // all_reduce | all_gather | reduce_scatter | all_to_all | broadcast
  int world = 0;                // ranks (GPUs) taking part
  std::vector<CollectivePoint> points;
  std::vector<AlphaBetaFit> fits;
};

struct HardwareProfile {
  std::string gpu;              // catalog key or device name (plan's "gpu")
  std::string date;             // UTC, ISO 8601, when the run started
  std::string command;          // the command line that produced it
  std::string tool;             // "stepscope 0.1.0"
  bool quick = false;           // --quick: fewer shapes and sizes
  double wall_seconds = 0;      // the whole run
  DeviceInfo device;
  std::vector<GemmResult> gemm;
  std::vector<BandwidthResult> memory;     // hbm_read, hbm_write, hbm_copy, hbm_triad, hbm_copy_memcpy, l2_read
  std::vector<BandwidthResult> host_copy;  // h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable
  std::vector<LatencyResult> launch;
  std::vector<CollectiveResult> collectives;
  std::vector<std::string> notes;          // what was not measured and why

  // Lookups; nullptr / 0 when absent.
  const BandwidthResult* memory_result(const std::string& name) const;
  const BandwidthResult* host_result(const std::string& name) const;
  const LatencyResult* launch_result(const std::string& name) const;
  const CollectiveResult* collective(const std::string& name) const;
  // Maximum achievable TFLOP/s of a dtype over the sweep; 0 when not measured.
  double gemm_max_tflops(const std::string& dtype) const;
};

}  // namespace stepscope::model
