#include "hwbench/golden_reference.h"

#include <fmt/core.h>

#include "model/gpu_table.h"

namespace stepscope::hwbench {

using model::BandwidthResult;
using model::HardwareProfile;
namespace {

// Known-good measured ceilings, per datasheet row (diagnose/hardware_table).
//  - H200 SXM: this project's H200 (PyTorch 2.11, CUDA 13.0, issue #5):
//    bf16 matmul 755-778 TFLOP/s on 8192-16384 cubes (the low end is the
//    reference), fp8 1407, tf32 352, fp32 51; device-to-device copy 4180 GB/s
//    counting read + write; host-to-device 55.4 GB/s pinned. (Pageable
//    copies, 18.3 GB/s there, are not judged: they are bound by the host's
//    memcpy into the driver's staging buffer, and PyTorch itself reached 8.1
//    GB/s on the same card on 2026-11-29; docs/performance.md.)
//  - H100 SXM and A100 80GB: "maximum achievable matmul FLOPS", S. Bekman,
//    Machine Learning Engineering (compute chapter): bf16 794.5 and 271.2 TFLOP/s.
struct ModelKnownGood {
  std::string_view datasheet_model;
  KnownGood value;
};

constexpr std::string_view kIssue5 = "stepscope issue #5: PyTorch 2.11 on an H200 of this project";
constexpr std::string_view kBekman = "S. Bekman, Machine Learning Engineering, maximum achievable matmul FLOPS";

constexpr ModelKnownGood kKnownGood[] = {
    {"NVIDIA H200 SXM", {"gemm_bf16_tflops", 755, kIssue5}},
    {"NVIDIA H200 SXM", {"gemm_fp8_tflops", 1407, kIssue5}},
    {"NVIDIA H200 SXM", {"gemm_tf32_tflops", 352, kIssue5}},
    {"NVIDIA H200 SXM", {"gemm_fp32_tflops", 51, kIssue5}},
    {"NVIDIA H200 SXM", {"hbm_copy_gbps", 4180, kIssue5}},
    {"NVIDIA H200 SXM", {"h2d_pinned_gbps", 55.4, kIssue5}},
    {"NVIDIA H100 SXM", {"gemm_bf16_tflops", 794.5, kBekman}},
    {"NVIDIA A100 80GB", {"gemm_bf16_tflops", 271.2, kBekman}},
};

// Host link per direction for rows whose datasheet names it: H100/H200 SXM
// and A100 datasheets list PCIe Gen5 128 GB/s (H100/H200) and Gen4 64 GB/s
// (A100), both directions together.
double host_link_datasheet(std::string_view model) {
  if (model == "NVIDIA H200 SXM" || model == "NVIDIA H100 SXM" || model == "NVIDIA H100 PCIe") return 64;
  if (model == "NVIDIA A100 80GB" || model == "NVIDIA A100 40GB") return 32;
  return 0;
}

// Shares of the datasheet healthy cards typically reach, for the rule
// without a known-good value: best large GEMMs 0.80 of the dense tensor-core
// peak (Bekman: H100 794.5/989, A100 271.2/312 = 0.87; the lower one), and
// 0.70 of the SIMT fp32 peak (an FFMA GEMM loses issue slots to loads);
// streaming kernels 0.85 of HBM (plan's hbm_fraction); pinned copies 0.80
// of the PCIe rate (protocol overhead). Pageable copies get no verdict (above).
struct MetricRule {
  const char* metric;
  const char* label;
  const char* unit;
  double typical_fraction;
};

constexpr MetricRule kRules[] = {
    {"gemm_bf16_tflops", "GEMM bf16", "TFLOP/s", 0.80}, {"gemm_fp16_tflops", "GEMM fp16", "TFLOP/s", 0.80},
    {"gemm_fp8_tflops", "GEMM fp8", "TFLOP/s", 0.80},   {"gemm_tf32_tflops", "GEMM tf32", "TFLOP/s", 0.80},
    {"gemm_fp32_tflops", "GEMM fp32", "TFLOP/s", 0.70}, {"hbm_copy_gbps", "HBM copy", "GB/s", 0.85},
    {"hbm_read_gbps", "HBM read", "GB/s", 0.85},        {"hbm_write_gbps", "HBM write", "GB/s", 0.85},
    {"hbm_triad_gbps", "HBM triad", "GB/s", 0.85},      {"h2d_pinned_gbps", "host-to-device pinned", "GB/s", 0.80},
    {"d2h_pinned_gbps", "device-to-host pinned", "GB/s", 0.80},
};

double measured_value(const HardwareProfile& p, std::string_view metric) {
  auto gemm = [&](const char* d) { return p.gemm_max_tflops(d); };
  auto mem = [&](const char* n) { const BandwidthResult* b = p.memory_result(n); return b ? b->gbps : 0.0; };
  auto host = [&](const char* n) { const BandwidthResult* b = p.host_result(n); return b ? b->gbps : 0.0; };
  if (metric == "gemm_bf16_tflops") return gemm("bf16");
  if (metric == "gemm_fp16_tflops") return gemm("fp16");
  if (metric == "gemm_fp8_tflops") return gemm("fp8");
  if (metric == "gemm_tf32_tflops") return gemm("tf32");
  if (metric == "gemm_fp32_tflops") return gemm("fp32");
  if (metric == "hbm_copy_gbps") return mem("hbm_copy");
  if (metric == "hbm_read_gbps") return mem("hbm_read");
  if (metric == "hbm_write_gbps") return mem("hbm_write");
  if (metric == "hbm_triad_gbps") return mem("hbm_triad");
  if (metric == "h2d_pinned_gbps") return host("h2d_pinned");
  if (metric == "d2h_pinned_gbps") return host("d2h_pinned");
  return 0;
}

double datasheet_value(const model::GpuPeaks* peaks, std::string_view metric) {
  if (!peaks) return 0;
  if (metric == "gemm_bf16_tflops") return peaks->bf16_tflops;
  if (metric == "gemm_fp16_tflops") return peaks->fp16_tflops;
  if (metric == "gemm_fp8_tflops") return peaks->fp8_tflops;
  if (metric == "gemm_tf32_tflops") return peaks->tf32_tflops;
  if (metric == "gemm_fp32_tflops") return peaks->fp32_tflops;
  if (metric.starts_with("hbm_")) return peaks->hbm_gbps;
  if (metric == "h2d_pinned_gbps" || metric == "d2h_pinned_gbps") return host_link_datasheet(peaks->model);
  return 0;
}

}  // namespace

std::string_view health_name(Health h) {
  switch (h) {
    case Health::kHealthy: return "healthy";
    case Health::kBelowReference: return "below_reference";
    case Health::kUnhealthy: return "unhealthy";
    case Health::kNoReference: return "no_reference";
  }
  return "no_reference";
}

std::vector<KnownGood> known_good_ceilings(std::string_view device_name) {
  std::vector<KnownGood> out;
  const model::GpuPeaks* peaks = model::find_gpu_peaks(device_name);
  if (!peaks) return out;
  for (const ModelKnownGood& k : kKnownGood)
    if (k.datasheet_model == peaks->model) out.push_back(k.value);
  return out;
}

Health judge_value(double value, double known_good, double datasheet, double typical_fraction) {
  if (known_good > 0) {
    if (value >= 0.95 * known_good) return Health::kHealthy;
    if (value >= 0.85 * known_good) return Health::kBelowReference;
    return Health::kUnhealthy;
  }
  if (datasheet > 0 && typical_fraction > 0) {
    double typical = typical_fraction * datasheet;
    if (value >= 0.9 * typical) return Health::kHealthy;
    if (value >= 0.75 * typical) return Health::kBelowReference;
    return Health::kUnhealthy;
  }
  return Health::kNoReference;
}

std::vector<Verdict> golden_comparison(const HardwareProfile& profile) {
  const std::string& name = profile.device.name.empty() ? profile.gpu : profile.device.name;
  const model::GpuPeaks* peaks = model::find_gpu_peaks(name);
  std::vector<KnownGood> known = known_good_ceilings(name);
  std::vector<Verdict> out;
  for (const MetricRule& rule : kRules) {
    double value = measured_value(profile, rule.metric);
    if (value <= 0) continue;
    Verdict v;
    v.metric = rule.metric;
    v.unit = rule.unit;
    v.value = value;
    v.datasheet = datasheet_value(peaks, rule.metric);
    v.typical_fraction = rule.typical_fraction;
    for (const KnownGood& k : known)
      if (k.metric == rule.metric) v.known_good = k.value;
    v.health = judge_value(value, v.known_good, v.datasheet, v.typical_fraction);
    std::string msg = fmt::format("{} {:.1f} {}", rule.label, value, rule.unit);
    if (v.datasheet > 0) msg += fmt::format(" = {:.0f}% of datasheet {:.1f}", 100 * value / v.datasheet, v.datasheet);
    if (v.known_good > 0) msg += fmt::format(", {:.0f}% of known-good {:.1f}", 100 * value / v.known_good, v.known_good);
    v.message = msg + ": " + std::string(health_name(v.health));
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace stepscope::hwbench
