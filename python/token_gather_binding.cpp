// The hot loop of stepscope.data's batches in C++: rows of decoded shard
// chunks (Arrow list offsets and ids, viewed as numpy arrays, not copied)
// written straight into the batch buffer and padded. One call per batch
// instead of a Python loop over its rows (docs/data.md, "Reading").
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.h"

namespace py = pybind11;

namespace stepscope::python {

namespace {

template <typename Id>
void copy_row(const Id* src, int64_t n, int32_t* dst) {
  if constexpr (sizeof(Id) == sizeof(int32_t)) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(int32_t));
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<int32_t>(src[i]);
  }
}

// out: int32 [rows, width], C-contiguous. chunks: (offsets, values) pairs;
// row_chunk[k] indexes chunks, row_index[k] is the row within it. Returns
// the token count written. Every index is checked: a bad one is
// std::invalid_argument (ValueError), never a read outside an array.
int64_t gather_rows(py::array_t<int32_t, py::array::c_style> out, const std::vector<py::tuple>& chunks,
                    py::array_t<int64_t, py::array::c_style | py::array::forcecast> row_chunk,
                    py::array_t<int64_t, py::array::c_style | py::array::forcecast> row_index, int32_t pad) {
  if (out.ndim() != 2) throw std::invalid_argument("out must be 2-D");
  const int64_t rows = out.shape(0), width = out.shape(1);
  if (row_chunk.size() != rows || row_index.size() != rows)
    throw std::invalid_argument("row_chunk and row_index need one entry per row of out");
  struct Chunk {
    py::array offsets, values;
    bool wide;  // int32 ids (else uint16)
  };
  std::vector<Chunk> cs;
  for (const py::tuple& t : chunks) {
    if (t.size() != 2) throw std::invalid_argument("each chunk is (offsets, values)");
    py::array o = t[0].cast<py::array>(), v = t[1].cast<py::array>();
    if (o.ndim() != 1 || v.ndim() != 1 || !(o.flags() & py::array::c_style) || !(v.flags() & py::array::c_style))
      throw std::invalid_argument("offsets and values must be contiguous 1-D arrays");
    if (!o.dtype().is(py::dtype::of<int32_t>())) throw std::invalid_argument("offsets must be int32");
    const bool wide = v.dtype().is(py::dtype::of<int32_t>());
    if (!wide && !v.dtype().is(py::dtype::of<uint16_t>())) throw std::invalid_argument("ids must be uint16 or int32");
    cs.push_back({o, v, wide});
  }
  const int64_t* rc = row_chunk.data();
  const int64_t* ri = row_index.data();
  int32_t* dst = out.mutable_data();
  int64_t tokens = 0;
  {
    py::gil_scoped_release unlocked;
    for (int64_t k = 0; k < rows; ++k) {
      if (rc[k] < 0 || rc[k] >= static_cast<int64_t>(cs.size()))
        throw std::invalid_argument("row " + std::to_string(k) + ": chunk index out of range");
      const Chunk& c = cs[static_cast<size_t>(rc[k])];
      const auto* off = static_cast<const int32_t*>(c.offsets.data());
      const int64_t n_off = c.offsets.size(), n_val = c.values.size();
      if (ri[k] < 0 || ri[k] + 1 >= n_off)
        throw std::invalid_argument("row " + std::to_string(k) + ": row index out of range");
      const int64_t a = off[ri[k]], b = off[ri[k] + 1], n = b - a;
      if (a < 0 || b < a || b > n_val) throw std::invalid_argument("row " + std::to_string(k) + ": bad offsets");
      if (n > width) throw std::invalid_argument("row " + std::to_string(k) + " is wider than the batch");
      int32_t* row = dst + k * width;
      if (c.wide) copy_row(static_cast<const int32_t*>(c.values.data()) + a, n, row);
      else copy_row(static_cast<const uint16_t*>(c.values.data()) + a, n, row);
      for (int64_t i = n; i < width; ++i) row[i] = pad;
      tokens += n;
    }
  }
  return tokens;
}

}  // namespace

void bind_token_gather(py::module_& m) {
  m.def("gather_token_rows", &gather_rows, py::arg("out"), py::arg("chunks"), py::arg("row_chunk"),
        py::arg("row_index"), py::arg("pad"),
        "Copies rows of decoded shard chunks into an int32 [rows, width] batch, padded; returns the tokens copied");
}

}  // namespace stepscope::python
