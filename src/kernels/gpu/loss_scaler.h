// CUDA kernels of the graph-safe loss scaler (issue #6 item 3), raw-pointer
// API free of torch. Semantics: kernels/loss_scaler_reference.h (those of
// torch.amp.GradScaler), matched bit for bit.
//
// Graph safety: neither launch reads anything from the host at run time. The
// scale, found_inf, the growth tracker and the per-tensor table live in device
// memory at fixed addresses, so a CUDA graph that captured the launches
// replays them with whatever values those buffers hold at replay time.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/loss_scaler_types.h"

namespace stepscope::kernels::gpu {

// One gradient tensor as the unscale kernel sees it. An array of these is
// copied to the device once per set of gradient addresses (plan_grad_tensors
// fills first_tile and vector_ok).
struct GradTensorDesc {
  void* data = nullptr;
  int64_t numel = 0;
  int64_t first_tile = 0;  // index of the tensor's first tile in the launch
  int32_t dtype = 0;       // GradDType
  int32_t vector_ok = 0;   // data is 16-byte aligned: full tiles use vector accesses
};
static_assert(sizeof(GradTensorDesc) == 32, "the table layout is shared with the torch binding");

// Elements per tile (one thread block). A multiple of every vector width.
inline constexpr int64_t kUnscaleTileElems = 8192;

// Validates the host-side descriptors (data/numel/dtype set by the caller),
// fills first_tile and vector_ok, and returns the number of tiles through
// total_tiles. Returns "" or why the table is unusable, naming the tensor.
std::string plan_grad_tensors(std::vector<GradTensorDesc>& descs, int64_t* total_tiles);

// Multiplies every gradient in place by the inverse scale and checks it, in
// one launch over all tensors:
//   inv_scale != null: use *inv_scale (torch's convention);
//   else scale != null: inv = float(1.0 / double(*scale)), as GradScaler.unscale_ computes it;
//   else: check only (inv = 1, nothing written).
// Sets *found_inf = 1.0f if any element is inf/NaN (the caller zeroes it);
// nonfinite[t] = count for tensor t (zeroed here, so one launch = one report).
// descs is the device copy of a table made by plan_grad_tensors.
std::string unscale_and_check(const GradTensorDesc* descs, int num_tensors, int64_t total_tiles, const float* scale,
                              const float* inv_scale, float* found_inf, int64_t* nonfinite, cudaStream_t stream);

// torch._amp_update_scale_ on the device (one thread).
std::string update_scale(float* scale, int32_t* growth_tracker, const float* found_inf, double growth_factor,
                         double backoff_factor, int32_t growth_interval, cudaStream_t stream);

}  // namespace stepscope::kernels::gpu
