// torch front of the block-sparse attention kernels (src/kernels/gpu/
// block_sparse_attention.cu): checks tensors, allocates outputs and the
// backward's workspace, launches on the current stream. The mask arrives as
// device tensors made and checked on the host by
// stepscope_kernels/block_sparse_attention.py (BlockSparseMask), so nothing
// here synchronises with the GPU.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/extension.h>

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/document_spans.h"
#include "kernels/gpu/block_sparse_attention.h"
#include "registry.h"

namespace {

using stepscope::kernels::AttentionShape;
using stepscope::kernels::gpu::AttnDType;
using stepscope::kernels::gpu::DeviceBlockMask;

void check_tensor(const at::Tensor& t, const char* name, const at::Tensor& like) {
  STEPSCOPE_CHECK(t.is_cuda(), name, " must be a CUDA tensor, got one on ", t.device());
  STEPSCOPE_CHECK(t.is_contiguous(), name, " must be contiguous (call .contiguous() first)");
  STEPSCOPE_CHECK(t.device() == like.device(), name, " is on ", t.device(), " but q is on ", like.device());
}

AttnDType attn_dtype(const at::Tensor& q) {
  if (q.scalar_type() == at::kHalf) return AttnDType::kFloat16;
  STEPSCOPE_CHECK(q.scalar_type() == at::kBFloat16, "q must be float16 or bfloat16, got ", q.scalar_type());
  return AttnDType::kBFloat16;
}

AttentionShape shape_of(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  STEPSCOPE_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, "q, k, v must be [batch, heads, seq, head_dim]");
  STEPSCOPE_CHECK(k.sizes() == v.sizes(), "k and v must have the same shape, got ", k.sizes(), " and ", v.sizes());
  STEPSCOPE_CHECK(k.scalar_type() == q.scalar_type() && v.scalar_type() == q.scalar_type(),
                  "q, k and v must have one dtype");
  return AttentionShape{q.size(0), q.size(1), k.size(1), q.size(2), k.size(2), q.size(3)};
}

DeviceBlockMask device_mask(const at::Tensor& q, const at::Tensor& ro, const at::Tensor& ci, const at::Tensor& pa,
                            const at::Tensor& tro, const at::Tensor& tci, const at::Tensor& tpa,
                            const std::optional<at::Tensor>& doc_ids, const std::optional<at::Tensor>& doc_spans,
                            int64_t block, int64_t groups, bool causal, int64_t window, int64_t global_tokens) {
  for (const auto& [t, name] : {std::pair{&ro, "row_offsets"}, std::pair{&ci, "col_indices"},
                                std::pair{&tro, "t_offsets"}, std::pair{&tci, "t_indices"}}) {
    check_tensor(*t, name, q);
    STEPSCOPE_CHECK(t->scalar_type() == at::kInt, name, " must be int32");
  }
  for (const auto& [t, name] : {std::pair{&pa, "partial"}, std::pair{&tpa, "t_partial"}}) {
    check_tensor(*t, name, q);
    STEPSCOPE_CHECK(t->scalar_type() == at::kByte, name, " must be uint8");
  }
  DeviceBlockMask m;
  m.rows = {ro.data_ptr<int32_t>(), ci.data_ptr<int32_t>(), pa.data_ptr<uint8_t>()};
  m.cols = {tro.data_ptr<int32_t>(), tci.data_ptr<int32_t>(), tpa.data_ptr<uint8_t>()};
  m.groups = static_cast<int>(groups), m.block = static_cast<int>(block), m.causal = causal;
  m.window = window, m.global_tokens = global_tokens;
  if (doc_ids) {
    check_tensor(*doc_ids, "doc_ids", q);
    STEPSCOPE_CHECK(doc_ids->scalar_type() == at::kInt, "doc_ids must be int32");
    STEPSCOPE_CHECK(doc_ids->numel() == q.size(2), "doc_ids must have seq = ", q.size(2), " entries, got ",
                    doc_ids->numel());
    m.doc_ids = doc_ids->data_ptr<int32_t>();
  }
  if (doc_spans) {
    STEPSCOPE_CHECK(doc_ids.has_value(), "doc_spans needs doc_ids");
    check_tensor(*doc_spans, "doc_spans", q);
    STEPSCOPE_CHECK(doc_spans->scalar_type() == at::kInt && doc_spans->numel() == 2 * q.size(2),
                    "doc_spans must be int32 [seq, 2], seq = ", q.size(2));
    m.doc_spans = doc_spans->data_ptr<int32_t>();
  }
  const int64_t blocks = (q.size(2) + block - 1) / block;
  STEPSCOPE_CHECK(ro.numel() == groups * blocks + 1 && tro.numel() == groups * blocks + 1,
                  "row_offsets and t_offsets must have groups × blocks + 1 = ", groups * blocks + 1, " entries");
  return m;
}

std::tuple<at::Tensor, at::Tensor> forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                           const at::Tensor& ro, const at::Tensor& ci, const at::Tensor& pa,
                                           const at::Tensor& tro, const at::Tensor& tci, const at::Tensor& tpa,
                                           const std::optional<at::Tensor>& doc_ids,
                                           const std::optional<at::Tensor>& doc_spans, int64_t block, int64_t groups,
                                           bool causal, int64_t window, int64_t global_tokens, double scale,
                                           int64_t version) {
  for (const auto& [t, name] : {std::pair{&q, "q"}, std::pair{&k, "k"}, std::pair{&v, "v"}}) check_tensor(*t, name, q);
  const AttnDType dtype = attn_dtype(q);
  const AttentionShape s = shape_of(q, k, v);
  const DeviceBlockMask m = device_mask(q, ro, ci, pa, tro, tci, tpa, doc_ids, doc_spans, block, groups, causal,
                                        window, global_tokens);
  const c10::cuda::CUDAGuard guard(q.device());
  at::Tensor out = at::empty_like(q);
  at::Tensor lse = at::empty({s.batch, s.heads, s.seq_q}, q.options().dtype(at::kFloat));
  const std::string err = stepscope::kernels::gpu::block_sparse_attention_forward(
      q.data_ptr(), k.data_ptr(), v.data_ptr(), s, m, static_cast<float>(scale), dtype, out.data_ptr(),
      lse.data_ptr<float>(), at::cuda::getCurrentCUDAStream(), static_cast<int>(version));
  STEPSCOPE_CHECK(err.empty(), err);
  return {out, lse};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> backward(
    const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& out, const at::Tensor& dout,
    const at::Tensor& lse, const at::Tensor& ro, const at::Tensor& ci, const at::Tensor& pa, const at::Tensor& tro,
    const at::Tensor& tci, const at::Tensor& tpa, const std::optional<at::Tensor>& doc_ids,
    const std::optional<at::Tensor>& doc_spans, int64_t block, int64_t groups, bool causal, int64_t window,
    int64_t global_tokens, double scale, int64_t version) {
  for (const auto& [t, name] : {std::pair{&q, "q"}, std::pair{&k, "k"}, std::pair{&v, "v"}, std::pair{&out, "out"},
                                std::pair{&dout, "grad_out"}, std::pair{&lse, "lse"}})
    check_tensor(*t, name, q);
  const AttnDType dtype = attn_dtype(q);
  const AttentionShape s = shape_of(q, k, v);
  STEPSCOPE_CHECK(out.sizes() == q.sizes() && dout.sizes() == q.sizes(), "out and grad_out must have q's shape");
  STEPSCOPE_CHECK(lse.scalar_type() == at::kFloat && lse.numel() == s.batch * s.heads * s.seq_q,
                  "lse must be float32 [batch, heads, seq]");
  const DeviceBlockMask m = device_mask(q, ro, ci, pa, tro, tci, tpa, doc_ids, doc_spans, block, groups, causal,
                                        window, global_tokens);
  const c10::cuda::CUDAGuard guard(q.device());
  at::Tensor dq = at::empty_like(q), dk = at::empty_like(k), dv = at::empty_like(v);
  at::Tensor ws = at::empty({stepscope::kernels::gpu::block_sparse_attention_workspace_bytes(s)},
                            q.options().dtype(at::kByte));
  const std::string err = stepscope::kernels::gpu::block_sparse_attention_backward(
      q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), dout.data_ptr(), lse.data_ptr<float>(), s, m,
      static_cast<float>(scale), dtype, dq.data_ptr(), dk.data_ptr(), dv.data_ptr(), ws.data_ptr(),
      at::cuda::getCurrentCUDAStream(), static_cast<int>(version));
  STEPSCOPE_CHECK(err.empty(), err);
  return {dq, dk, dv};
}

}  // namespace

// Each token's document as [first, last] (int32 [seq, 2], on the CPU) where
// every document id is one run of tokens, else None
// (kernels/document_spans.h); BlockSparseMask keeps it for v17's kernels.
std::optional<at::Tensor> document_spans_of(const at::Tensor& doc_ids) {
  STEPSCOPE_CHECK(!doc_ids.is_cuda() && doc_ids.scalar_type() == at::kInt && doc_ids.dim() == 1,
                  "doc_ids must be a 1-D int32 CPU tensor");
  const at::Tensor ids = doc_ids.contiguous();
  const std::vector<int32_t> spans = stepscope::kernels::document_spans(ids.data_ptr<int32_t>(), ids.numel());
  if (spans.empty()) return std::nullopt;
  at::Tensor out = at::empty({ids.numel(), 2}, ids.options());
  std::copy(spans.begin(), spans.end(), out.data_ptr<int32_t>());
  return out;
}

void register_block_sparse_attention(pybind11::module_& m) {
  m.def("document_spans", guarded(&document_spans_of));
  m.def("block_sparse_attention_forward", guarded(&forward));
  m.def("block_sparse_attention_backward", guarded(&backward));
}
