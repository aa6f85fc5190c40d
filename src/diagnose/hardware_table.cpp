#include "diagnose/hardware_table.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace stepscope::diagnose {
namespace {

// One row per model. Tensor-core rates are dense: NVIDIA's datasheets print
// them "with sparsity" (2:4), which is twice the dense rate, so those are
// halved here. AMD MI250/MI250X appear to PyTorch as two devices (one per
// GCD), so their rows are per GCD: half the package figures.
constexpr std::array kPeaks = {
    // NVIDIA H200 Tensor Core GPU datasheet (SXM): FP32 67 TF; TF32 989 TF*,
    // BF16/FP16 1,979 TF*, FP8 3,958 TF* (* with sparsity); 141 GB HBM3e at
    // 4.8 TB/s; NVLink 900 GB/s.
    GpuPeaks{"NVIDIA H200 SXM", 67, 494.7, 989.4, 989.4, 1978.9, 4800, 900, 141,
             "NVIDIA H200 Tensor Core GPU datasheet (SXM)"},
    // NVIDIA H100 Tensor Core GPU datasheet, PCIe column: FP32 51 TF; TF32
    // 756 TF*, BF16/FP16 1,513 TF*, FP8 3,026 TF*; 80 GB at 2 TB/s; NVLink
    // bridge 600 GB/s.
    GpuPeaks{"NVIDIA H100 PCIe", 51, 378, 756, 756, 1513, 2000, 600, 80,
             "NVIDIA H100 Tensor Core GPU datasheet (PCIe)"},
    // Same datasheet, SXM column: FP32 67 TF; TF32 989 TF*, BF16/FP16 1,979
    // TF*, FP8 3,958 TF*; 80 GB HBM3 at 3.35 TB/s; NVLink 900 GB/s.
    GpuPeaks{"NVIDIA H100 SXM", 67, 494.7, 989.4, 989.4, 1978.9, 3350, 900, 80,
             "NVIDIA H100 Tensor Core GPU datasheet (SXM)"},
    // NVIDIA A100 Tensor Core GPU datasheet: FP32 19.5 TF; TF32 156 TF
    // (312*), BF16/FP16 312 TF (624*); 80 GB HBM2e at 2,039 GB/s (SXM);
    // NVLink 600 GB/s. No FP8.
    GpuPeaks{"NVIDIA A100 80GB", 19.5, 156, 312, 312, 0, 2039, 600, 80,
             "NVIDIA A100 Tensor Core GPU datasheet (80GB SXM)"},
    // Same datasheet, 40 GB: HBM2 at 1,555 GB/s.
    GpuPeaks{"NVIDIA A100 40GB", 19.5, 156, 312, 312, 0, 1555, 600, 40,
             "NVIDIA A100 Tensor Core GPU datasheet (40GB)"},
    // NVIDIA V100 Tensor Core GPU datasheet, SXM2: FP32 15.7 TF; tensor
    // (FP16) 125 TF; HBM2 900 GB/s; NVLink 300 GB/s. No TF32/BF16.
    GpuPeaks{"NVIDIA V100 SXM2", 15.7, 0, 0, 125, 0, 900, 300, 32,
             "NVIDIA V100 Tensor Core GPU datasheet (SXM2)"},
    // Same datasheet, PCIe: FP32 14 TF; tensor 112 TF; 900 GB/s; no NVLink.
    GpuPeaks{"NVIDIA V100 PCIe", 14, 0, 0, 112, 0, 900, 0, 32,
             "NVIDIA V100 Tensor Core GPU datasheet (PCIe)"},
    // NVIDIA L40S datasheet: FP32 91.6 TF; TF32 183 TF (366*), BF16/FP16
    // 362.05 TF (733*), FP8 733 TF (1,466*); 48 GB GDDR6 at 864 GB/s.
    GpuPeaks{"NVIDIA L40S", 91.6, 183, 362.05, 362.05, 733, 864, 0, 48, "NVIDIA L40S datasheet"},
    // NVIDIA L4 datasheet: FP32 30.3 TF; TF32 120 TF*, BF16/FP16 242 TF*,
    // FP8 485 TF*; 24 GB at 300 GB/s.
    GpuPeaks{"NVIDIA L4", 30.3, 60, 121, 121, 242.5, 300, 0, 24, "NVIDIA L4 datasheet"},
    // NVIDIA A10 datasheet: FP32 31.2 TF; TF32 62.5 TF (125*), BF16/FP16 125
    // TF (250*); 24 GB GDDR6 at 600 GB/s.
    GpuPeaks{"NVIDIA A10", 31.2, 62.5, 125, 125, 0, 600, 0, 24, "NVIDIA A10 datasheet"},
    // NVIDIA Turing architecture whitepaper, GeForce RTX 2080 Ti (reference
    // clocks): FP32 13.4 TF; FP16 tensor with FP32 accumulate 53.8 TF
    // (PyTorch accumulates in FP32); 616 GB/s GDDR6, 11 GB.
    GpuPeaks{"NVIDIA GeForce RTX 2080 Ti", 13.4, 0, 0, 53.8, 0, 616, 0, 11,
             "NVIDIA Turing GPU architecture whitepaper (RTX 2080 Ti)"},
    // AMD Instinct MI300X data sheet: FP32 vector 163.4 TF; TF32 653.7 TF,
    // BF16/FP16 1,307.4 TF, FP8 2,614.9 TF (dense); 192 GB HBM3 at 5.3 TB/s;
    // Infinity Fabric 896 GB/s.
    GpuPeaks{"AMD Instinct MI300X", 163.4, 653.7, 1307.4, 1307.4, 2614.9, 5300, 896, 192,
             "AMD Instinct MI300X accelerator data sheet"},
    // AMD Instinct MI250X data sheet (package): FP32 vector 47.9 TF, BF16/FP16
    // 383 TF; 128 GB HBM2e at 3.2768 TB/s; Infinity Fabric 800 GB/s. Per GCD
    // (one PyTorch device): half of each. CDNA2 has no TF32.
    GpuPeaks{"AMD Instinct MI250X (one GCD)", 23.95, 0, 191.5, 191.5, 0, 1638.4, 400, 64,
             "AMD Instinct MI250X accelerator data sheet (halved per GCD)"},
    // AMD Instinct MI250 data sheet (package): FP32 vector 45.3 TF, BF16/FP16
    // 362.1 TF; 128 GB HBM2e at 3.2768 TB/s; Infinity Fabric 800 GB/s. Per GCD: half.
    GpuPeaks{"AMD Instinct MI250 (one GCD)", 22.65, 0, 181.05, 181.05, 0, 1638.4, 400, 64,
             "AMD Instinct MI250 accelerator data sheet (halved per GCD)"},
    // NVIDIA HGX B200 datasheet, per GPU: FP32 75 TF; TF32 2.2 PF*, BF16/FP16
    // 4.5 PF*, FP8 9 PF* (* with sparsity); 180 GB HBM3e at 7.7 TB/s; NVLink 5
    // 1.8 TB/s.
    GpuPeaks{"NVIDIA B200", 75, 1100, 2250, 2250, 4500, 7700, 1800, 180, "NVIDIA HGX B200 datasheet"},
};

// Name rules, tried in order on the lower-cased device name: every `all`
// token must occur and the `none` token must not. Order matters: the PCIe
// and 40 GB variants come before the plain model name.
struct NameRule {
  std::array<std::string_view, 2> all;
  std::string_view none;
  size_t row;
};

constexpr std::array kNameRules = {
    NameRule{{"h200", ""}, "", 0},
    NameRule{{"h100", "pcie"}, "", 1},
    NameRule{{"h100", ""}, "", 2},
    NameRule{{"a100", "80g"}, "", 3},
    NameRule{{"a100", ""}, "", 4},
    NameRule{{"v100", "pcie"}, "", 6},
    NameRule{{"v100", ""}, "", 5},
    NameRule{{"l40s", ""}, "", 7},
    NameRule{{"l4", ""}, "l40", 8},
    NameRule{{"a10", ""}, "a100", 9},
    NameRule{{"2080 ti", ""}, "", 10},
    NameRule{{"mi300x", ""}, "", 11},
    NameRule{{"mi250x", ""}, "", 12},
    NameRule{{"mi250", ""}, "", 13},
    NameRule{{"b200", ""}, "", 14},
};

bool contains(std::string_view hay, std::string_view needle) {
  return needle.empty() || hay.find(needle) != std::string_view::npos;
}

}  // namespace

const GpuPeaks* find_gpu_peaks(std::string_view device_name) {
  std::string lower(device_name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& rule : kNameRules) {
    if (!contains(lower, rule.all[0]) || !contains(lower, rule.all[1])) continue;
    if (!rule.none.empty() && contains(lower, rule.none)) continue;
    return &kPeaks[rule.row];
  }
  return nullptr;
}

const GpuPeaks* find_gpu_peaks(const trace::EventStore& store) {
  for (const auto& d : store.meta.devices)
    if (const GpuPeaks* p = find_gpu_peaks(d.name)) return p;
  return nullptr;
}

double matmul_peak_tflops(const GpuPeaks& peaks, std::string_view dtype, bool tf32) {
  std::string lower(dtype);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (contains(lower, "bfloat16")) return peaks.bf16_tflops;
  if (contains(lower, "float8")) return peaks.fp8_tflops;
  if (contains(lower, "half") || lower == "float16") return peaks.fp16_tflops;
  if (lower == "float" || lower == "float32") {
    if (tf32 && peaks.tf32_tflops > 0) return peaks.tf32_tflops;
    return peaks.fp32_tflops;
  }
  if (lower == "double") return 0;
  return 0;
}

}  // namespace stepscope::diagnose
