#include "hwbench/profile_ceilings.h"

#include <algorithm>

namespace stepscope::hwbench {

// The hardware profile and its parts (src/model/hardware_profile.h).
using namespace model;

std::optional<model::GpuPeaks> measured_peaks(const HardwareProfile& profile, std::string& error) {
  const std::string& name = profile.device.name.empty() ? profile.gpu : profile.device.name;
  model::GpuPeaks row;
  if (const model::GpuPeaks* sheet = model::find_gpu_peaks(name)) row = *sheet;
  row.model = name;
  row.source = "measured ceilings (stepscope bench hardware profile), datasheet where not measured";
  bool any = false;
  auto take = [&](double measured, double& field) {
    if (measured <= 0) return;
    field = measured;
    any = true;
  };
  take(profile.gemm_max_tflops("fp32"), row.fp32_tflops);
  take(profile.gemm_max_tflops("tf32"), row.tf32_tflops);
  take(profile.gemm_max_tflops("bf16"), row.bf16_tflops);
  take(profile.gemm_max_tflops("fp16"), row.fp16_tflops);
  take(profile.gemm_max_tflops("fp8"), row.fp8_tflops);
  if (const BandwidthResult* copy = profile.memory_result("hbm_copy")) take(copy->gbps, row.hbm_gbps);
  if (const CollectiveResult* ar = profile.collective("all_reduce"); ar && ar->world >= 2) {
    double best = 0;
    for (const CollectivePoint& p : ar->points) best = std::max(best, p.busbw_gbps);
    take(2 * best, row.link_gbps);
  }
  if (profile.device.memory_bytes > 0) row.memory_gb = static_cast<double>(profile.device.memory_bytes) / 1e9;
  if (!any) {
    error = "the profile holds no measured GEMM rate, HBM copy or all-reduce bandwidth";
    return std::nullopt;
  }
  return row;
}

}  // namespace stepscope::hwbench
