// Peak rates of the GPUs stepscope knows, one sourced row per model, so
// achieved numbers (TFLOP/s, GB/s) can be put against what the chip can do:
// the one table of datasheet numbers that diagnose, plan, bench and monitor read.
// Tensor-core figures are dense (the datasheets' "with sparsity" numbers
// halved); a rate of 0 means the chip has no such unit.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace stepscope::model {

struct GpuPeaks {
  std::string_view model;   // e.g. "NVIDIA H200 SXM"
  double fp32_tflops = 0;   // FP32 on the SIMT (CUDA-core / vector) path, TFLOP/s
  double tf32_tflops = 0;   // TF32 tensor core, dense, TFLOP/s (0: none)
  double bf16_tflops = 0;   // BF16 tensor core, dense, TFLOP/s (0: none)
  double fp16_tflops = 0;   // FP16 tensor core, dense, TFLOP/s
  double fp8_tflops = 0;    // FP8 tensor core, dense, TFLOP/s (0: none)
  double hbm_gbps = 0;      // device memory bandwidth, GB/s (1e9 B/s)
  double link_gbps = 0;     // GPU-to-GPU link (NVLink / Infinity Fabric), aggregate both directions, GB/s; 0: PCIe only
  double memory_gb = 0;     // device memory as the datasheet prints it, GB
  std::string_view source;  // the datasheet the row comes from
  double power_w = 0;       // maximum board power (TDP/TGP) as the datasheet prints it, W (0: not stated)
  double mxfp8_tflops = 0;  // MXFP8 (OCP microscaling, block-scaled FP8) tensor core, dense (0: none)
  double fp4_tflops = 0;    // NVFP4 / MXFP4 tensor core, dense (0: none)
};

// The row for a device name as CUDA/ROCm reports it (deviceProperties
// "name", e.g. "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB",
// "Tesla V100-SXM2-32GB"); nullptr when no row matches.
const GpuPeaks* find_gpu_peaks(std::string_view device_name);

// Every row, in table order.
std::span<const GpuPeaks> gpu_table();

// Peak TFLOP/s of a matmul in `dtype` (PyTorch's "Input type" text: "float",
// "c10::BFloat16", "c10::Half", "c10::Float8_e4m3fn", ...): the tensor-core
// rate of that type, where float means TF32 when `tf32` is true; 0 if unknown.
double matmul_peak_tflops(const GpuPeaks& peaks, std::string_view dtype, bool tf32);

}  // namespace stepscope::model
