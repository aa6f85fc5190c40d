// torch front of the graph-safe loss scaler kernels (src/kernels/gpu/loss_scaler.cu).
// The Python class GraphSafeGradScaler (stepscope_kernels/loss_scaler.py)
// plans a table once per set of gradient addresses (plan_grad_table, on the
// host into pinned memory; the caller copies it to the device without a
// sync) and then launches unscale_and_check / update_scale, which read only
// device memory and so can be captured in a CUDA graph.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/extension.h>

#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/gpu/loss_scaler.h"
#include "registry.h"

namespace {

using stepscope::kernels::GradDType;
using stepscope::kernels::gpu::GradTensorDesc;

void check_device_scalar(const at::Tensor& t, const char* name, at::ScalarType type) {
  STEPSCOPE_CHECK(t.is_cuda(), name, " must be a CUDA tensor, got one on ", t.device());
  STEPSCOPE_CHECK(t.numel() == 1, name, " must have one element, got ", t.numel());
  STEPSCOPE_CHECK(t.scalar_type() == type, name, " must be ", type, ", got ", t.scalar_type());
}

// grads (CUDA, one device, float32/float16/bfloat16, dense) -> (pinned uint8
// CPU tensor holding one 32-byte GradTensorDesc per gradient, total tiles).
std::tuple<at::Tensor, int64_t> plan_grad_table(const std::vector<at::Tensor>& grads) {
  std::vector<GradTensorDesc> descs(grads.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    const at::Tensor& g = grads[i];
    STEPSCOPE_CHECK(g.is_cuda(), "gradient ", i, " must be a CUDA tensor, got one on ", g.device());
    STEPSCOPE_CHECK(g.device() == grads[0].device(), "gradient ", i, " is on ", g.device(), ", gradient 0 on ",
                grads[0].device(), ": one scaler table covers one device");
    STEPSCOPE_CHECK(g.layout() == at::kStrided, "gradient ", i, " is sparse; sparse gradients are not supported");
    // Dense in some order (contiguous, channels-last, ...): its elements are
    // one block of numel values, which is all an elementwise pass needs.
    STEPSCOPE_CHECK(g.is_non_overlapping_and_dense(), "gradient ", i,
                " is not dense (strides ", g.strides(), "); make the parameter contiguous");
    switch (g.scalar_type()) {
      case at::kFloat: descs[i].dtype = static_cast<int32_t>(GradDType::kFloat32); break;
      case at::kHalf: descs[i].dtype = static_cast<int32_t>(GradDType::kFloat16); break;
      case at::kBFloat16: descs[i].dtype = static_cast<int32_t>(GradDType::kBFloat16); break;
      default: STEPSCOPE_CHECK(false, "gradient ", i, " must be float32, float16 or bfloat16, got ", g.scalar_type());
    }
    descs[i].data = g.data_ptr();
    descs[i].numel = g.numel();
  }
  int64_t tiles = 0;
  const std::string why = stepscope::kernels::gpu::plan_grad_tensors(descs, &tiles);
  STEPSCOPE_CHECK(why.empty(), "plan_grad_table: ", why);
  at::Tensor table = at::empty({static_cast<int64_t>(descs.size() * sizeof(GradTensorDesc))},
                               at::TensorOptions().dtype(at::kByte).pinned_memory(true));
  if (!descs.empty()) std::memcpy(table.data_ptr(), descs.data(), descs.size() * sizeof(GradTensorDesc));
  return {table, tiles};
}

// table: the device copy of plan_grad_table's result. scale / inv_scale as
// in kernels/gpu/loss_scaler.h (both None: check only). found_inf is set to 1
// on a non-finite element (not zeroed here, as torch); nonfinite (int64 [n])
// receives the per-tensor counts.
void unscale_and_check(const at::Tensor& table, int64_t num_tensors, int64_t total_tiles,
                       const std::optional<at::Tensor>& scale, const std::optional<at::Tensor>& inv_scale,
                       const at::Tensor& found_inf, const at::Tensor& nonfinite) {
  check_device_scalar(found_inf, "found_inf", at::kFloat);
  STEPSCOPE_CHECK(table.is_cuda() && table.scalar_type() == at::kByte && table.is_contiguous(),
              "table must be the contiguous CUDA uint8 copy of plan_grad_table's result");
  STEPSCOPE_CHECK(num_tensors >= 0 && table.numel() == num_tensors * static_cast<int64_t>(sizeof(GradTensorDesc)),
              "table holds ", table.numel(), " bytes, expected ", num_tensors, " x ", sizeof(GradTensorDesc));
  STEPSCOPE_CHECK(nonfinite.is_cuda() && nonfinite.scalar_type() == at::kLong && nonfinite.is_contiguous() &&
                  nonfinite.numel() == num_tensors,
              "nonfinite must be a contiguous CUDA int64 tensor of ", num_tensors, " elements");
  const float* scale_ptr = nullptr;
  const float* inv_ptr = nullptr;
  if (scale.has_value()) {
    check_device_scalar(*scale, "scale", at::kFloat);
    scale_ptr = scale->data_ptr<float>();
  }
  if (inv_scale.has_value()) {
    check_device_scalar(*inv_scale, "inv_scale", at::kFloat);
    inv_ptr = inv_scale->data_ptr<float>();
  }
  STEPSCOPE_CHECK(table.device() == found_inf.device() && nonfinite.device() == found_inf.device(),
              "table, nonfinite and found_inf must be on one device");
  const c10::cuda::CUDAGuard guard(found_inf.device());
  const std::string err = stepscope::kernels::gpu::unscale_and_check(
      reinterpret_cast<const GradTensorDesc*>(table.data_ptr()), static_cast<int>(num_tensors), total_tiles,
      scale_ptr, inv_ptr, found_inf.data_ptr<float>(), nonfinite.data_ptr<int64_t>(),
      at::cuda::getCurrentCUDAStream());
  STEPSCOPE_CHECK(err.empty(), err);
}

void update_scale(const at::Tensor& scale, const at::Tensor& growth_tracker, const at::Tensor& found_inf,
                  double growth_factor, double backoff_factor, int64_t growth_interval) {
  check_device_scalar(scale, "scale", at::kFloat);
  check_device_scalar(growth_tracker, "growth_tracker", at::kInt);
  check_device_scalar(found_inf, "found_inf", at::kFloat);
  STEPSCOPE_CHECK(growth_interval > 0 && growth_interval <= INT32_MAX, "growth_interval must be in [1, 2^31), got ",
              growth_interval);
  const c10::cuda::CUDAGuard guard(scale.device());
  const std::string err = stepscope::kernels::gpu::update_scale(
      scale.data_ptr<float>(), growth_tracker.data_ptr<int32_t>(), found_inf.data_ptr<float>(), growth_factor,
      backoff_factor, static_cast<int32_t>(growth_interval), at::cuda::getCurrentCUDAStream());
  STEPSCOPE_CHECK(err.empty(), err);
}

}  // namespace

void register_loss_scaler(pybind11::module_& m) {
  m.def("plan_grad_table", guarded(&plan_grad_table), pybind11::arg("grads"),
        "Describe gradient tensors for one unscale launch: returns (pinned uint8 table, total tiles).");
  m.def("unscale_and_check", guarded(&unscale_and_check), pybind11::arg("table"), pybind11::arg("num_tensors"),
        pybind11::arg("total_tiles"), pybind11::arg("scale"), pybind11::arg("inv_scale"), pybind11::arg("found_inf"),
        pybind11::arg("nonfinite"),
        "Unscale all gradients of a table in place (inverse of scale, or inv_scale; neither: check only), set "
        "found_inf on inf/NaN and write per-tensor non-finite counts.");
  m.def("update_scale", guarded(&update_scale), pybind11::arg("scale"), pybind11::arg("growth_tracker"),
        pybind11::arg("found_inf"), pybind11::arg("growth_factor"), pybind11::arg("backoff_factor"),
        pybind11::arg("growth_interval"), "torch._amp_update_scale_ semantics, on the device, no host sync.");
}
