// Python binding of the fused image augmentation's CPU reference
// (src/kernels/image_augment_*): the parameter draws and the whole op, so
// tests can hold the reference against torchvision on the CPU
// (tests/python/test_image_augment_reference.py). The CUDA kernel has its own
// torch front (python/stepscope_kernels). std::invalid_argument becomes
// ValueError with the library's sentence.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>
#include <vector>

#include "bindings.h"
#include "kernels/image_augment_reference.h"

namespace py = pybind11;
using namespace stepscope::kernels::augment;

namespace stepscope::python {

namespace {

using ImageArray = py::array_t<uint8_t, py::array::c_style | py::array::forcecast>;

std::vector<ImageView> views_of(const std::vector<ImageArray>& images) {
  std::vector<ImageView> out;
  for (size_t i = 0; i < images.size(); ++i) {
    const ImageArray& a = images[i];
    if (a.ndim() != 3 || a.shape(0) != 3)
      throw std::invalid_argument("image " + std::to_string(i) + " must be uint8 of shape (3, H, W)");
    out.push_back({a.data(), static_cast<int32_t>(a.shape(1)), static_cast<int32_t>(a.shape(2)),
                   a.shape(1) * a.shape(2), a.shape(2)});
  }
  return out;
}

}  // namespace

void bind_augment(py::module_& m) {
  py::class_<AugmentConfig>(m, "AugmentConfig", "RandomResizedCrop + flip + ColorJitter + Normalize settings")
      .def(py::init<>())
      .def_readwrite("out_h", &AugmentConfig::out_h)
      .def_readwrite("out_w", &AugmentConfig::out_w)
      .def_readwrite("scale_lo", &AugmentConfig::scale_lo)
      .def_readwrite("scale_hi", &AugmentConfig::scale_hi)
      .def_readwrite("ratio_lo", &AugmentConfig::ratio_lo)
      .def_readwrite("ratio_hi", &AugmentConfig::ratio_hi)
      .def_readwrite("flip_p", &AugmentConfig::flip_p)
      .def_readwrite("brightness", &AugmentConfig::brightness)
      .def_readwrite("contrast", &AugmentConfig::contrast)
      .def_readwrite("saturation", &AugmentConfig::saturation)
      .def_property(
          "mean", [](const AugmentConfig& c) { return std::vector<float>(c.mean, c.mean + 3); },
          [](AugmentConfig& c, const std::vector<float>& v) {
            if (v.size() != 3) throw std::invalid_argument("mean needs 3 values");
            std::copy(v.begin(), v.end(), c.mean);
          })
      .def_property(
          "std", [](const AugmentConfig& c) { return std::vector<float>(c.std, c.std + 3); },
          [](AugmentConfig& c, const std::vector<float>& v) {
            if (v.size() != 3) throw std::invalid_argument("std needs 3 values");
            std::copy(v.begin(), v.end(), c.std);
          });
  py::class_<AugmentParams>(m, "AugmentParams", "One sample's crop box, flip, color-op order and factors")
      .def(py::init<>())
      .def_readwrite("top", &AugmentParams::top)
      .def_readwrite("left", &AugmentParams::left)
      .def_readwrite("height", &AugmentParams::height)
      .def_readwrite("width", &AugmentParams::width)
      .def_readwrite("flip", &AugmentParams::flip)
      .def_readwrite("brightness", &AugmentParams::brightness)
      .def_readwrite("contrast", &AugmentParams::contrast)
      .def_readwrite("saturation", &AugmentParams::saturation)
      .def_property(
          "order", [](const AugmentParams& p) { return std::vector<int>(p.order, p.order + 3); },
          [](AugmentParams& p, const std::vector<int>& v) {
            if (v.size() != 3) throw std::invalid_argument("order needs 3 ops");
            for (int k = 0; k < 3; ++k) p.order[k] = static_cast<uint8_t>(v[k]);
          });
  m.def(
      "augment_draw_params",
      [](const std::vector<std::pair<int32_t, int32_t>>& sizes, const AugmentConfig& c, uint64_t seed,
         uint64_t first) {
        std::vector<AugmentParams> out;
        for (size_t i = 0; i < sizes.size(); ++i) {
          if (sizes[i].first < 1 || sizes[i].second < 1)
            throw std::invalid_argument("image " + std::to_string(i) + " has a zero size");
          out.push_back(draw_params(c, seed, first + i, sizes[i].first, sizes[i].second));
        }
        return out;
      },
      py::arg("sizes"), py::arg("config"), py::arg("seed"), py::arg("first") = 0,
      "The draws for images of these (height, width), samples first, first + 1, ... of the seed");
  m.def(
      "augment_reference",
      [](const std::vector<ImageArray>& images, const std::vector<AugmentParams>& params, const AugmentConfig& c) {
        const std::vector<uint16_t> out = augment_reference(views_of(images), params, c);
        py::array_t<uint16_t> a({static_cast<py::ssize_t>(images.size()), static_cast<py::ssize_t>(c.out_h),
                                 static_cast<py::ssize_t>(c.out_w), py::ssize_t{3}});
        std::copy(out.begin(), out.end(), a.mutable_data());
        return a;
      },
      py::arg("images"), py::arg("params"), py::arg("config"),
      "The augmented batch as bf16 bit patterns (uint16), [N, out_h, out_w, 3]");
}

}  // namespace stepscope::python
