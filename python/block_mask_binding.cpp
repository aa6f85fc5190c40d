// Python binding of the block-sparse attention masks (src/kernels/block_mask*):
// the builders (the input-dependent top-k selection's CPU reference too), the
// dense and FlexAttention conversions and the validator.
// python/stepscope/block_mask.py wraps them; std::invalid_argument becomes
// ValueError with the library's message.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "kernels/block_mask.h"
#include "kernels/block_mask_builders.h"

namespace py = pybind11;
using namespace stepscope::kernels;

namespace stepscope::python {

void bind_block_mask(py::module_& m) {
  py::class_<ElementRule>(m, "ElementRule", "Which token pairs attend inside a partial block")
      .def(py::init<>())
      .def_readwrite("causal", &ElementRule::causal)
      .def_readwrite("window", &ElementRule::window)
      .def_readwrite("global_tokens", &ElementRule::global_tokens)
      .def_readwrite("doc_ids", &ElementRule::doc_ids)
      .def("allows", &ElementRule::allows, py::arg("i"), py::arg("j"));
  py::class_<BlockMask>(m, "BlockMask", "Live key blocks per query block, in CSR form")
      .def(py::init<>())
      .def_readonly("seq_q", &BlockMask::seq_q)
      .def_readonly("seq_k", &BlockMask::seq_k)
      .def_readonly("block", &BlockMask::block)
      .def_readonly("groups", &BlockMask::groups)
      .def_readonly("row_offsets", &BlockMask::row_offsets)
      .def_readonly("col_indices", &BlockMask::col_indices)
      .def_readonly("partial", &BlockMask::partial)
      .def_readonly("rule", &BlockMask::rule)
      .def_property_readonly("q_blocks", &BlockMask::q_blocks)
      .def_property_readonly("k_blocks", &BlockMask::k_blocks)
      .def_property_readonly("live_blocks", &BlockMask::live_blocks)
      .def_property_readonly("density", &BlockMask::density)
      .def_property_readonly("csr_bytes", &BlockMask::csr_bytes)
      .def_property_readonly("bitmap_bytes", &BlockMask::bitmap_bytes)
      .def_property_readonly("index_table_bytes", &BlockMask::index_table_bytes);
  m.def("block_mask_validate", &validate_block_mask);
  m.def("block_mask_to_bitmap", &to_block_bitmap);
  m.def("block_mask_transpose", &transpose_block_mask);
  m.def("block_mask_from_bitmap",
        [](int64_t seq_q, int64_t seq_k, int block, int groups, const std::vector<uint8_t>& bitmap, ElementRule rule) {
          return from_block_bitmap(seq_q, seq_k, block, groups, bitmap, std::move(rule));
        });
  m.def("block_mask_from_flex",
        [](int64_t seq_q, int64_t seq_k, int block, int groups, const std::vector<int32_t>& kv_num,
           const std::vector<int32_t>& kv_idx, const std::vector<int32_t>& full_num,
           const std::vector<int32_t>& full_idx, ElementRule rule) {
          return from_flex_block_mask(seq_q, seq_k, block, groups, kv_num, kv_idx, full_num, full_idx,
                                      std::move(rule));
        });
  m.def("block_mask_from_rule", &mask_from_rule);
  m.def("block_mask_causal", &causal_mask);
  m.def("block_mask_sliding_window", &sliding_window_mask);
  m.def("block_mask_documents",
        [](const std::vector<int64_t>& lengths, int block, bool causal) { return document_mask(lengths, block, causal); });
  m.def("block_mask_global_window", &global_window_mask);
  m.def("block_mask_strided", &strided_mask);
  m.def("block_mask_dilated", &dilated_mask);
  m.def("block_mask_bigbird", &bigbird_mask);
  m.def("block_mask_topk_pooled",
        [](const std::vector<float>& q, const std::vector<float>& k, int64_t batch, int64_t heads, int64_t kv_heads,
           int64_t seq, int64_t head_dim, int block, int topk, int window_blocks, int global_blocks, bool causal) {
          return topk_pooled_mask(q, k, batch, heads, kv_heads, seq, head_dim, block, topk, window_blocks,
                                  global_blocks, causal);
        });
}

}  // namespace stepscope::python
