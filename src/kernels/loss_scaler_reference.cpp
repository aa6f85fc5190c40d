#include "kernels/loss_scaler_reference.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/bf16.h"
#include "kernels/fp16.h"

namespace stepscope::kernels {

float inverse_scale(float scale) { return static_cast<float>(1.0 / static_cast<double>(scale)); }

namespace {

// Counts and unscales one tensor; To/From convert its storage to and from float.
template <class T, class To, class From>
int64_t unscale_one(T* p, int64_t n, float inv, To to_float, From from_float) {
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float f = to_float(p[i]);
    if (!std::isfinite(f)) ++bad;
    if (inv != 1.0f) p[i] = from_float(f * inv);
  }
  return bad;
}

float same(float f) { return f; }

}  // namespace

UnscaleCheckResult unscale_and_check_reference(std::span<const HostGrad> grads, float inv_scale) {
  UnscaleCheckResult r;
  r.nonfinite.reserve(grads.size());
  for (size_t t = 0; t < grads.size(); ++t) {
    const HostGrad& g = grads[t];
    if (g.numel < 0) throw std::invalid_argument("unscale reference: tensor " + std::to_string(t) + " has numel < 0");
    if (g.numel > 0 && g.data == nullptr) {
      throw std::invalid_argument("unscale reference: tensor " + std::to_string(t) + " has a null data pointer");
    }
    int64_t bad = 0;
    switch (g.dtype) {
      case GradDType::kFloat32:
        bad = unscale_one(static_cast<float*>(g.data), g.numel, inv_scale, same, same);
        break;
      case GradDType::kFloat16:
        bad = unscale_one(static_cast<uint16_t*>(g.data), g.numel, inv_scale, fp16_to_float, float_to_fp16_rne);
        break;
      case GradDType::kBFloat16:
        bad = unscale_one(static_cast<uint16_t*>(g.data), g.numel, inv_scale, bf16_to_float, float_to_bf16_rne);
        break;
      default:
        throw std::invalid_argument("unscale reference: tensor " + std::to_string(t) + " has an unknown dtype");
    }
    r.found_inf = r.found_inf || bad > 0;
    r.nonfinite.push_back(bad);
  }
  return r;
}

void update_scale_reference(ScaleState& state, float found_inf, double growth_factor, double backoff_factor,
                            int32_t growth_interval) {
  if (found_inf != 0.0f) {  // NaN counts as found, as in C's truth test
    state.scale = static_cast<float>(static_cast<double>(state.scale) * backoff_factor);
    state.growth_tracker = 0;
    return;
  }
  const int32_t successful = state.growth_tracker + 1;
  if (successful == growth_interval) {
    const auto grown = static_cast<float>(static_cast<double>(state.scale) * growth_factor);
    if (std::isfinite(grown)) state.scale = grown;  // never grow to inf
    state.growth_tracker = 0;
  } else {
    state.growth_tracker = successful;
  }
}

}  // namespace stepscope::kernels
