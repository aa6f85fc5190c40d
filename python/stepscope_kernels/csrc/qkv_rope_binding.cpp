// torch front of the fused QKV split + RoPE kernels (src/kernels/gpu/qkv_rope.cu):
// checks tensors, allocates outputs, launches on the current stream. The
// autograd function and the nn.Module live in stepscope_kernels/qkv_rope.py.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/extension.h>

#include <string>
#include <tuple>

#include "kernels/gpu/qkv_rope.h"
#include "registry.h"

namespace {

using stepscope::kernels::QkvRopeDims;
using stepscope::kernels::gpu::RopeDType;

RopeDType rope_dtype(const at::Tensor& t, const char* name) {
  switch (t.scalar_type()) {
    case at::kFloat:
      return RopeDType::kFloat32;
    case at::kHalf:
      return RopeDType::kFloat16;
    case at::kBFloat16:
      return RopeDType::kBFloat16;
    default:
      STEPSCOPE_CHECK(false, name, " must be float32, float16 or bfloat16, got ", t.scalar_type());
  }
  return RopeDType::kFloat32;  // not reached
}

void check_cuda_contiguous(const at::Tensor& t, const char* name) {
  STEPSCOPE_CHECK(t.is_cuda(), name, " must be a CUDA tensor, got one on ", t.device());
  STEPSCOPE_CHECK(t.layout() == at::kStrided, name, " must be a dense (strided) tensor");
  STEPSCOPE_CHECK(t.is_contiguous(), name, " must be contiguous (call .contiguous() first)");
}

// cos/sin: fp32 [table_len, head_dim / 2] on the device of `like`.
void check_tables(const at::Tensor& cos, const at::Tensor& sin, int64_t head_dim, const at::Tensor& like) {
  for (const auto* t : {&cos, &sin}) {
    const char* name = t == &cos ? "cos" : "sin";
    check_cuda_contiguous(*t, name);
    STEPSCOPE_CHECK(t->scalar_type() == at::kFloat, name, " must be float32 (the RoPE tables are kept in fp32), got ",
                t->scalar_type());
    STEPSCOPE_CHECK(t->dim() == 2 && t->size(1) == head_dim / 2, name, " must have shape [max_len, head_dim / 2 = ",
                head_dim / 2, "], got ", t->sizes());
    STEPSCOPE_CHECK(t->device() == like.device(), name, " is on ", t->device(), " but the activations are on ",
                like.device());
  }
  STEPSCOPE_CHECK(cos.size(0) == sin.size(0), "cos and sin must have the same length, got ", cos.size(0), " and ",
              sin.size(0));
}

void check_dims(const QkvRopeDims& d, const char* op) {
  const std::string why = stepscope::kernels::check_qkv_rope_dims(d);
  STEPSCOPE_CHECK(why.empty(), op, ": ", why);
}

// qkv [B, S, (H + 2 Hkv) * D] -> (q [B, H, S, D], k [B, Hkv, S, D], v [B, Hkv, S, D]).
std::tuple<at::Tensor, at::Tensor, at::Tensor> qkv_rope_forward(const at::Tensor& qkv, const at::Tensor& cos,
                                                                const at::Tensor& sin, int64_t heads,
                                                                int64_t kv_heads, int64_t head_dim) {
  check_cuda_contiguous(qkv, "qkv");
  const RopeDType dtype = rope_dtype(qkv, "qkv");
  STEPSCOPE_CHECK(qkv.dim() == 3, "qkv must have shape [batch, seq, (heads + 2 * kv_heads) * head_dim], got ",
              qkv.sizes());
  QkvRopeDims d{qkv.size(0), qkv.size(1), heads, kv_heads, head_dim, cos.dim() == 2 ? cos.size(0) : 0};
  check_dims(d, "qkv_rope_forward");
  STEPSCOPE_CHECK(qkv.size(2) == (heads + 2 * kv_heads) * head_dim, "qkv's last dimension must be (heads + 2 * kv_heads)",
              " * head_dim = ", (heads + 2 * kv_heads) * head_dim, ", got ", qkv.size(2));
  check_tables(cos, sin, head_dim, qkv);
  const c10::cuda::CUDAGuard guard(qkv.device());
  at::Tensor q = at::empty({d.batch, heads, d.seq, head_dim}, qkv.options());
  at::Tensor k = at::empty({d.batch, kv_heads, d.seq, head_dim}, qkv.options());
  at::Tensor v = at::empty({d.batch, kv_heads, d.seq, head_dim}, qkv.options());
  const std::string err = stepscope::kernels::gpu::qkv_rope_forward(
      qkv.data_ptr(), cos.data_ptr<float>(), sin.data_ptr<float>(), d, dtype, q.data_ptr(), k.data_ptr(),
      v.data_ptr(), at::cuda::getCurrentCUDAStream());
  STEPSCOPE_CHECK(err.empty(), err);
  return {q, k, v};
}

// (grad_q, grad_k, grad_v) in the attention layout -> grad_qkv [B, S, (H + 2 Hkv) * D].
at::Tensor qkv_rope_backward(const at::Tensor& grad_q, const at::Tensor& grad_k, const at::Tensor& grad_v,
                             const at::Tensor& cos, const at::Tensor& sin) {
  check_cuda_contiguous(grad_q, "grad_q");
  check_cuda_contiguous(grad_k, "grad_k");
  check_cuda_contiguous(grad_v, "grad_v");
  const RopeDType dtype = rope_dtype(grad_q, "grad_q");
  STEPSCOPE_CHECK(grad_k.scalar_type() == grad_q.scalar_type() && grad_v.scalar_type() == grad_q.scalar_type(),
              "grad_q, grad_k and grad_v must have one dtype, got ", grad_q.scalar_type(), ", ",
              grad_k.scalar_type(), ", ", grad_v.scalar_type());
  STEPSCOPE_CHECK(grad_q.dim() == 4, "grad_q must have shape [batch, heads, seq, head_dim], got ", grad_q.sizes());
  STEPSCOPE_CHECK(grad_k.dim() == 4 && grad_k.sizes() == grad_v.sizes(),
              "grad_k and grad_v must have one shape [batch, kv_heads, seq, head_dim], got ", grad_k.sizes(), " and ",
              grad_v.sizes());
  STEPSCOPE_CHECK(grad_k.size(0) == grad_q.size(0) && grad_k.size(2) == grad_q.size(2) &&
                  grad_k.size(3) == grad_q.size(3),
              "grad_k's batch, seq and head_dim must match grad_q's: ", grad_k.sizes(), " vs ", grad_q.sizes());
  STEPSCOPE_CHECK(grad_k.device() == grad_q.device() && grad_v.device() == grad_q.device(),
              "grad_q, grad_k and grad_v must be on one device");
  const int64_t head_dim = grad_q.size(3);
  QkvRopeDims d{grad_q.size(0), grad_q.size(2), grad_q.size(1), grad_k.size(1), head_dim,
                cos.dim() == 2 ? cos.size(0) : 0};
  check_dims(d, "qkv_rope_backward");
  check_tables(cos, sin, head_dim, grad_q);
  const c10::cuda::CUDAGuard guard(grad_q.device());
  at::Tensor grad_qkv = at::empty({d.batch, d.seq, (d.heads + 2 * d.kv_heads) * head_dim}, grad_q.options());
  const std::string err = stepscope::kernels::gpu::qkv_rope_backward(
      grad_q.data_ptr(), grad_k.data_ptr(), grad_v.data_ptr(), cos.data_ptr<float>(), sin.data_ptr<float>(), d,
      dtype, grad_qkv.data_ptr(), at::cuda::getCurrentCUDAStream());
  STEPSCOPE_CHECK(err.empty(), err);
  return grad_qkv;
}

}  // namespace

void register_qkv_rope(pybind11::module_& m) {
  m.def("qkv_rope_forward", guarded(&qkv_rope_forward), pybind11::arg("qkv"), pybind11::arg("cos"), pybind11::arg("sin"),
        pybind11::arg("heads"), pybind11::arg("kv_heads"), pybind11::arg("head_dim"),
        "Split qkv [B, S, (H + 2 Hkv) * D] into q [B, H, S, D], k and v [B, Hkv, S, D], rotating q and k "
        "(rotate-half RoPE, fp32 tables [max_len, D / 2]).");
  m.def("qkv_rope_backward", guarded(&qkv_rope_backward), pybind11::arg("grad_q"), pybind11::arg("grad_k"),
        pybind11::arg("grad_v"), pybind11::arg("cos"), pybind11::arg("sin"),
        "Gradient of qkv_rope_forward: returns grad_qkv [B, S, (H + 2 Hkv) * D].");
}
