// torch front of the fused image augmentation (src/kernels/gpu/image_augment.cu):
// a list of decoded CUDA uint8 images (3, H, W), as torchvision.io.decode_jpeg
// returns them, in; a bf16 channels-last batch [N, 3, out_h, out_w] and the
// drawn parameters out. The image table goes to the device from pinned
// memory without a sync; explicit parameters are checked on the host before
// anything is launched.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/extension.h>

#include <cstring>
#include <optional>
#include <tuple>
#include <vector>

#include "kernels/gpu/image_augment.h"
#include "kernels/image_augment_check.h"
#include "registry.h"

namespace {

using stepscope::kernels::augment::AugmentConfig;
using stepscope::kernels::augment::AugmentParams;
using stepscope::kernels::augment::ImageView;

static_assert(sizeof(AugmentParams) == 32, "stepscope_kernels/image_augment.py reads AugmentParams as 32 bytes");

// config: out_h, out_w, scale_lo, scale_hi, ratio_lo, ratio_hi, flip_p,
// brightness, contrast, saturation, mean[3], std[3] (16 numbers).
AugmentConfig config_of(const std::vector<double>& v) {
  STEPSCOPE_CHECK(v.size() == 16, "config must hold 16 numbers, got ", v.size());
  AugmentConfig c;
  c.out_h = static_cast<int>(v[0]);
  c.out_w = static_cast<int>(v[1]);
  c.scale_lo = static_cast<float>(v[2]);
  c.scale_hi = static_cast<float>(v[3]);
  c.ratio_lo = static_cast<float>(v[4]);
  c.ratio_hi = static_cast<float>(v[5]);
  c.flip_p = static_cast<float>(v[6]);
  c.brightness = static_cast<float>(v[7]);
  c.contrast = static_cast<float>(v[8]);
  c.saturation = static_cast<float>(v[9]);
  for (int k = 0; k < 3; ++k) {
    c.mean[k] = static_cast<float>(v[10 + k]);
    c.std[k] = static_cast<float>(v[13 + k]);
  }
  return c;
}

// A pinned host tensor holding `bytes` from `src`, copied to `device` without a sync.
at::Tensor to_device(const void* src, size_t bytes, const c10::Device& device) {
  at::Tensor host = at::empty({static_cast<int64_t>(bytes)}, at::TensorOptions().dtype(at::kByte).pinned_memory(true));
  std::memcpy(host.data_ptr(), src, bytes);
  return host.to(device, /*non_blocking=*/true);
}

std::tuple<at::Tensor, at::Tensor> augment(const std::vector<at::Tensor>& images, const std::vector<double>& config,
                                           int64_t seed, int64_t first, const std::optional<at::Tensor>& params) {
  const AugmentConfig c = config_of(config);
  STEPSCOPE_CHECK(!images.empty(), "images: the batch has no image");
  const c10::Device device = images[0].device();
  std::vector<ImageView> table(images.size());
  for (size_t i = 0; i < images.size(); ++i) {
    const at::Tensor& im = images[i];
    STEPSCOPE_CHECK(im.is_cuda() && im.device() == device, "images[", i, "] must be a CUDA tensor on ", device,
                    ", got one on ", im.device());
    STEPSCOPE_CHECK(im.scalar_type() == at::kByte, "images[", i, "] must be uint8, got ", im.scalar_type());
    STEPSCOPE_CHECK(im.dim() == 3 && im.size(0) == 3, "images[", i, "] must have shape (3, H, W), got ", im.sizes());
    STEPSCOPE_CHECK(im.stride(2) == 1, "images[", i, "] must have unit column stride (strides ", im.strides(),
                    "); pass .contiguous()");
    table[i] = {im.data_ptr<uint8_t>(), static_cast<int32_t>(im.size(1)), static_cast<int32_t>(im.size(2)),
                im.stride(0), im.stride(1)};
  }
  const std::string why = stepscope::kernels::augment::check_augment(table.data(), table.size(), c);
  STEPSCOPE_CHECK(why.empty(), "image_augment: ", why);
  const c10::cuda::CUDAGuard guard(device);
  const at::cuda::CUDAStream torch_stream = at::cuda::getCurrentCUDAStream();
  cudaStream_t stream = torch_stream.stream();
  const int n = static_cast<int>(images.size());
  at::Tensor table_dev = to_device(table.data(), table.size() * sizeof(ImageView), device);
  at::Tensor params_dev;
  if (params.has_value()) {
    const at::Tensor& p = *params;
    STEPSCOPE_CHECK(!p.is_cuda() && p.scalar_type() == at::kByte && p.is_contiguous() &&
                        p.numel() == static_cast<int64_t>(n * sizeof(AugmentParams)),
                    "params must be the contiguous CPU uint8 tensor of ", n, " x 32 bytes the op returns");
    const auto* ps = reinterpret_cast<const AugmentParams*>(p.data_ptr<uint8_t>());
    for (int i = 0; i < n; ++i) {
      const std::string bad = stepscope::kernels::augment::check_box(table[i], ps[i], static_cast<size_t>(i));
      STEPSCOPE_CHECK(bad.empty(), "params: ", bad);
    }
    params_dev = to_device(ps, n * sizeof(AugmentParams), device);
  } else {
    params_dev = at::empty({static_cast<int64_t>(n * sizeof(AugmentParams))},
                           at::TensorOptions().dtype(at::kByte).device(device));
    const std::string e = stepscope::kernels::gpu::augment_draw(
        table.data(), reinterpret_cast<const ImageView*>(table_dev.data_ptr()), n, c, static_cast<uint64_t>(seed),
        static_cast<uint64_t>(first), reinterpret_cast<AugmentParams*>(params_dev.data_ptr()), stream);
    STEPSCOPE_CHECK(e.empty(), e);
  }
  at::Tensor work = at::empty({static_cast<int64_t>(stepscope::kernels::gpu::augment_workspace_bytes(n, c))},
                              at::TensorOptions().dtype(at::kByte).device(device));
  at::Tensor out = at::empty({n, c.out_h, c.out_w, 3}, at::TensorOptions().dtype(at::kBFloat16).device(device));
  const std::string e = stepscope::kernels::gpu::augment_apply(
      table.data(), reinterpret_cast<const ImageView*>(table_dev.data_ptr()), n,
      reinterpret_cast<const AugmentParams*>(params_dev.data_ptr()), c, work.data_ptr(),
      reinterpret_cast<uint16_t*>(out.data_ptr()), stream);
  STEPSCOPE_CHECK(e.empty(), e);
  // The images are read by the kernels on this stream: keep them alive until then.
  for (const at::Tensor& im : images) im.record_stream(torch_stream);
  return {out.permute({0, 3, 1, 2}), params_dev};
}

}  // namespace

void register_image_augment(pybind11::module_& m) {
  m.def("image_augment", guarded(&augment), pybind11::arg("images"), pybind11::arg("config"), pybind11::arg("seed"),
        pybind11::arg("first"), pybind11::arg("params") = std::nullopt,
        "Fused RandomResizedCrop + flip + ColorJitter + Normalize: (bf16 [N, 3, H, W] channels-last, params bytes)");
}
