// The GPUs a plan runs on: peak rates (from diagnose/hardware_table, the one
// source of datasheet numbers), the node layout and the achievable fractions
// that turn peaks into what libraries reach. A hardware profile written by
// `stepscope bench` (schema in docs/planner.md) replaces the fractions with
// measured rates.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/training_settings.h"

namespace stepscope::model {

// One measured GEMM of a profile: shape and achieved TFLOP/s.
struct GemmSample {
  double m = 0, n = 0, k = 0;
  Dtype dtype = Dtype::kBf16;
  double tflops = 0;
};

struct GpuSpec {
  std::string name;                                         // catalog key, e.g. "h100-sxm"
  std::string datasheet_name;                               // the diagnose::hardware_table row it reads peaks from
  double bf16_tflops = 0, fp16_tflops = 0, fp8_tflops = 0;  // dense tensor-core peaks
  double mxfp8_tflops = 0, fp4_tflops = 0;                  // block-scaled formats (0: no such unit)
  double memory_gb = 0;                                     // HBM, 1e9 bytes
  double hbm_gbps = 0;                                      // HBM bandwidth, GB/s
  double nvlink_gbps = 0;                                   // NVLink per GPU per direction, GB/s
  int gpus_per_node = 8;
  double network_gbps = 0;  // inter-node bandwidth per GPU per direction, GB/s
  double host_link_gbps = 0;  // achievable GPU ↔ host memory copy rate per direction (pinned), GB/s
  int sms = 0;              // streaming multiprocessors (wave quantization)
  // Achievable fractions (docs/planner.md "Constants"): of the tensor-core
  // peak by the best large GEMM, of HBM by streaming kernels, of NVLink and
  // of the network by NCCL ring collectives (bus bandwidth).
  double gemm_fraction = 0;
  // Of the 8-bit peak by the best fp8 GEMM (and the block-scaled formats);
  // 0: gemm_fraction.
  double fp8_gemm_fraction = 0;
  double hbm_fraction = 0;
  double nvlink_fraction = 0;
  double network_fraction = 0;
  double flash_fraction = 0;     // fused attention kernels (AttentionKernel::kFlash), of the tensor-core peak
  double fa2_fraction = 0;       // FlashAttention-2 (AttentionKernel::kFlash2), of the tensor-core peak
  // Whether the GEMM library hides a tile's epilogue (writing C) behind the
  // next tile's main loop. Hopper/Blackwell: yes (persistent warp-specialized
  // kernels, TMA stores). Ampere: no, one thread block per SM writes its tile
  // after its main loop, so the output write adds to the GEMM time.
  bool gemm_epilogue_overlapped = true;
  double nvlink_latency_s = 0;   // α per ring step inside a node
  double network_latency_s = 0;  // α per ring step across nodes
  std::string source;            // where the non-datasheet numbers come from

  double peak_tflops(Dtype d) const;
  double hbm_achievable_Bps() const { return hbm_gbps * 1e9 * hbm_fraction; }
  double nvlink_achievable_Bps() const { return nvlink_gbps * 1e9 * nvlink_fraction; }
  double network_achievable_Bps() const { return network_gbps * 1e9 * network_fraction; }
  // Host copies: the catalog's rate, 25 GB/s (PCIe Gen4) where none is known.
  double host_link_Bps() const { return (host_link_gbps > 0 ? host_link_gbps : 25) * 1e9; }
};

struct ClusterSpec {
  GpuSpec gpu;
  int gpus = 1;  // total GPUs of the job
  // Measured GEMMs of a profile (empty: use gpu.gemm_fraction as is).
  std::vector<GemmSample> gemm_samples;
};

const std::vector<GpuSpec>& gpu_catalog();
// By catalog key ("a100-80-sxm", "h100-sxm", ...) or a device name as the
// CSV / CUDA print it ("A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"); nullptr if unknown.
const GpuSpec* find_gpu(std::string_view name);

}  // namespace stepscope::model
