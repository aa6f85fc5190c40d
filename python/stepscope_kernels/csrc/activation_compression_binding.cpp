// torch front of the activation quantize/dequantize kernels
// (src/kernels/gpu/activation_quant.cu): checks tensors, allocates the
// outputs, launches on the current stream. The autograd functions and the
// model wrapper live in stepscope_kernels/activation_compression.py.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/extension.h>

#include <string>
#include <tuple>

#include "kernels/gpu/activation_quant.h"
#include "registry.h"

namespace {

using stepscope::kernels::gpu::ActDType;

ActDType act_dtype(at::ScalarType t, const char* what) {
  switch (t) {
    case at::kBFloat16:
      return ActDType::kBFloat16;
    case at::kHalf:
      return ActDType::kFloat16;
    case at::kFloat:
      return ActDType::kFloat32;
    default:
      STEPSCOPE_CHECK(false, what, " must be bfloat16, float16 or float32, got ", t);
  }
  return ActDType::kFloat32;  // not reached
}

void check_options(int64_t bits, int64_t block) {
  STEPSCOPE_CHECK(bits == 4 || bits == 8, "bits must be 4 or 8, got ", bits);
  STEPSCOPE_CHECK(block == 64 || block == 128, "block must be 64 or 128, got ", block);
}

void check_cuda_contiguous(const at::Tensor& t, const char* name) {
  STEPSCOPE_CHECK(t.is_cuda(), name, " must be a CUDA tensor, got one on ", t.device());
  STEPSCOPE_CHECK(t.is_contiguous(), name, " must be contiguous (call .contiguous() first)");
}

// x (any shape, contiguous) -> (codes uint8 [ceil(numel*bits/8)],
// scale bf16 [nblocks], zero bf16 [nblocks]), three views of one buffer.
std::tuple<at::Tensor, at::Tensor, at::Tensor> act_quantize(const at::Tensor& x, int64_t bits, int64_t block,
                                                            bool stochastic, uint64_t seed) {
  check_options(bits, block);
  check_cuda_contiguous(x, "x");
  const ActDType dtype = act_dtype(x.scalar_type(), "x");
  const c10::cuda::CUDAGuard guard(x.device());
  const int64_t n = x.numel();
  const int64_t code_bytes = bits == 8 ? n : (n + 1) / 2;
  const int64_t nblocks = (n + block - 1) / block;
  // One allocation holds codes, scale and zero (16-byte aligned parts): one
  // caching-allocator call per quantized activation instead of three.
  auto align16 = [](int64_t b) { return (b + 15) / 16 * 16; };
  const int64_t scale_off = align16(code_bytes), zero_off = scale_off + align16(2 * nblocks);
  at::Tensor buf = at::empty({zero_off + 2 * nblocks}, x.options().dtype(at::kByte));
  at::Tensor codes = buf.narrow(0, 0, code_bytes);
  at::Tensor scale = buf.narrow(0, scale_off, 2 * nblocks).view(at::kBFloat16);
  at::Tensor zero = buf.narrow(0, zero_off, 2 * nblocks).view(at::kBFloat16);
  const std::string err = stepscope::kernels::gpu::act_quantize(
      x.data_ptr(), dtype, n, static_cast<int>(bits), static_cast<int>(block), stochastic, seed,
      codes.data_ptr<uint8_t>(), reinterpret_cast<uint16_t*>(scale.data_ptr<at::BFloat16>()),
      reinterpret_cast<uint16_t*>(zero.data_ptr<at::BFloat16>()), at::cuda::getCurrentCUDAStream());
  STEPSCOPE_CHECK(err.empty(), "act_quantize: ", err);
  return {codes, scale, zero};
}

// Writes the dequantized values into `out` (contiguous, out.numel() elements
// of bf16/fp16/fp32) and returns it.
at::Tensor act_dequantize(const at::Tensor& codes, const at::Tensor& scale, const at::Tensor& zero, at::Tensor out,
                          int64_t bits, int64_t block) {
  check_options(bits, block);
  check_cuda_contiguous(codes, "codes");
  check_cuda_contiguous(scale, "scale");
  check_cuda_contiguous(zero, "zero");
  check_cuda_contiguous(out, "out");
  STEPSCOPE_CHECK(codes.scalar_type() == at::kByte, "codes must be uint8, got ", codes.scalar_type());
  STEPSCOPE_CHECK(scale.scalar_type() == at::kBFloat16, "scale must be bfloat16, got ", scale.scalar_type());
  STEPSCOPE_CHECK(zero.scalar_type() == at::kBFloat16, "zero must be bfloat16, got ", zero.scalar_type());
  const ActDType dtype = act_dtype(out.scalar_type(), "out");
  const int64_t n = out.numel();
  const int64_t code_bytes = bits == 8 ? n : (n + 1) / 2;
  const int64_t nblocks = (n + block - 1) / block;
  STEPSCOPE_CHECK(codes.numel() == code_bytes, "codes has ", codes.numel(), " bytes, ", n, " elements at ", bits,
              " bits need ", code_bytes);
  STEPSCOPE_CHECK(scale.numel() == nblocks && zero.numel() == nblocks, "scale and zero must have ", nblocks,
              " entries (", n, " elements, block ", block, "), got ", scale.numel(), " and ", zero.numel());
  STEPSCOPE_CHECK(codes.device() == out.device() && scale.device() == out.device() && zero.device() == out.device(),
              "codes, scale, zero and out must be on one device");
  const c10::cuda::CUDAGuard guard(out.device());
  const std::string err = stepscope::kernels::gpu::act_dequantize(
      codes.data_ptr<uint8_t>(), reinterpret_cast<const uint16_t*>(scale.data_ptr<at::BFloat16>()),
      reinterpret_cast<const uint16_t*>(zero.data_ptr<at::BFloat16>()), n, static_cast<int>(bits),
      static_cast<int>(block), dtype, out.data_ptr(), at::cuda::getCurrentCUDAStream());
  STEPSCOPE_CHECK(err.empty(), "act_dequantize: ", err);
  return out;
}

}  // namespace

void register_activation_compression(pybind11::module_& m) {
  m.def("act_quantize", guarded(&act_quantize), pybind11::arg("x"), pybind11::arg("bits"), pybind11::arg("block"),
        pybind11::arg("stochastic"), pybind11::arg("seed"),
        "Block-wise quantize a contiguous CUDA tensor: returns (codes uint8, scale bf16, zero bf16).");
  m.def("act_dequantize", guarded(&act_dequantize), pybind11::arg("codes"), pybind11::arg("scale"), pybind11::arg("zero"),
        pybind11::arg("out"), pybind11::arg("bits"), pybind11::arg("block"),
        "Dequantize into `out` (its dtype and numel define the result); returns out.");
}
