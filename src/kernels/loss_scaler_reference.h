// CPU reference of the graph-safe loss scaler (issue #6 item 3): the oracle
// of gpu/loss_scaler.cu and the definition of its semantics, which are those
// of torch.amp.GradScaler's two device ops:
//   * _amp_foreach_non_finite_check_and_unscale_: every gradient element g
//     (fp32, or fp16/bf16 widened to fp32) becomes g * inv_scale rounded once
//     to its dtype (left as is when inv_scale == 1); found_inf is set to 1 if
//     any element was inf or NaN before the multiply. The caller zeroes it.
//   * _amp_update_scale_: if found_inf != 0 the scale is multiplied by
//     backoff_factor and the growth tracker reset; otherwise the tracker counts
//     one more good step and, on reaching growth_interval, the scale is
//     multiplied by growth_factor (kept only if finite) and the tracker reset.
//     Products are taken in double and rounded to float.
// On top of torch, the check counts the non-finite elements of each tensor,
// so a report can say where the first inf/NaN appeared.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/loss_scaler_types.h"

namespace stepscope::kernels {

// One gradient tensor in host memory.
struct HostGrad {
  GradDType dtype = GradDType::kFloat32;
  void* data = nullptr;  // numel elements of dtype (16-bit types as bit patterns)
  int64_t numel = 0;
};

struct UnscaleCheckResult {
  bool found_inf = false;
  std::vector<int64_t> nonfinite;  // per tensor, in the order given
};

// The inverse scale GradScaler uses: the reciprocal taken in double, rounded to float.
float inverse_scale(float scale);

// Unscales every tensor in place by inv_scale and checks it. Throws
// std::invalid_argument on a null pointer with numel > 0 or a negative numel.
UnscaleCheckResult unscale_and_check_reference(std::span<const HostGrad> grads, float inv_scale);

struct ScaleState {
  float scale = 65536.0f;
  int32_t growth_tracker = 0;
};

// One update with the combined found_inf of the step (nonzero: a skipped step).
void update_scale_reference(ScaleState& state, float found_inf, double growth_factor, double backoff_factor,
                            int32_t growth_interval);

}  // namespace stepscope::kernels
