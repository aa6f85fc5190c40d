// Python binding of the length-bucketing sampler (src/sampling/): the C++
// core does the work; python/stepscope/sampling.py wraps it as a PyTorch
// batch sampler. Bad options raise ValueError with the core's one-line reason.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <bit>
#include <span>

#include <stdexcept>

#include "bindings.h"
#include "sampling/length_bucketing.h"

namespace py = pybind11;
using namespace stepscope::sampling;

namespace stepscope::python {

namespace {

py::list batches_to_python(const std::vector<Batch>& batches) {
  py::list out;
  for (const Batch& b : batches) out.append(py::cast(b.indices));
  return out;
}

// The batches as two buffers of little-endian int64, for datasets of
// millions of samples (a list of lists costs a Python int per sample): the
// sample indices of every batch in order, and offsets [batches + 1] into
// them. Bytes, not numpy arrays: Debian's pybind11 2.10 builds numpy 2
// arrays with wrong strides, and np.frombuffer reads bytes the same with
// any numpy.
py::tuple batches_to_buffers(const std::vector<Batch>& batches) {
  std::vector<int64_t> indices, offsets{0};
  offsets.reserve(batches.size() + 1);
  for (const Batch& b : batches) {
    indices.insert(indices.end(), b.indices.begin(), b.indices.end());
    offsets.push_back(static_cast<int64_t>(indices.size()));
  }
  static_assert(std::endian::native == std::endian::little, "the buffers are little-endian int64");
  return py::make_tuple(
      py::bytes(reinterpret_cast<const char*>(indices.data()), indices.size() * sizeof(int64_t)),
      py::bytes(reinterpret_cast<const char*>(offsets.data()), offsets.size() * sizeof(int64_t)));
}

}  // namespace

void bind_sampling(py::module_& m) {
  py::register_exception<std::invalid_argument>(m, "InvalidArgument", PyExc_ValueError);

  m.def(
      "bucket_batches",
      [](const py::object& lengths, int64_t max_tokens, int64_t max_batch_size, int64_t window_batches,
         uint64_t seed, int64_t epoch, int rank, int world_size, int worker, int num_workers, bool even_ranks,
         bool as_arrays) -> py::tuple {  // one return type for both forms (pybind11 3 types make_tuple's result)
        // An int32 numpy array is read in place; anything else goes through
        // the strict list conversion (a float or an out-of-range value is a TypeError).
        // numpy is looked at only when given one of its arrays: the sampler
        // works where numpy is not installed.
        std::vector<int32_t> converted;
        std::span<const int32_t> view;
        py::object keep;  // the contiguous array viewed (not a py::array_t member: its default constructor imports numpy)
        const py::handle type = py::type::handle_of(lengths);
        if (type.attr("__name__").cast<std::string>() == "ndarray" &&
            type.attr("__module__").cast<std::string>() == "numpy" &&
            py::reinterpret_borrow<py::array>(lengths).dtype().is(py::dtype::of<int32_t>()) &&
            py::reinterpret_borrow<py::array>(lengths).ndim() == 1) {
          auto array = py::array_t<int32_t, py::array::c_style>::ensure(lengths);  // a copy only when not contiguous
          view = std::span<const int32_t>(array.data(), static_cast<size_t>(array.size()));
          keep = std::move(array);
        } else {
          try {
            converted = lengths.cast<std::vector<int32_t>>();
          } catch (const py::cast_error&) {
            throw py::type_error("lengths must be a sequence of ints or an int32 numpy array");
          }
          view = converted;
        }
        BucketingOptions o;
        o.max_tokens = max_tokens;
        o.max_batch_size = max_batch_size;
        o.window_batches = window_batches;
        o.seed = seed;
        o.epoch = epoch;
        o.rank = rank;
        o.world_size = world_size;
        o.worker = worker;
        o.num_workers = num_workers;
        o.even_ranks = even_ranks;
        BatchPlan p = make_batches(view, o);
        py::dict stats;
        PaddingStats s = padding_of(p.batches);
        stats["tokens"] = s.tokens;
        stats["padded_tokens"] = s.padded_tokens;
        stats["waste_pct"] = s.waste_pct();
        stats["total_batches"] = p.total_batches;
        stats["dropped_batches"] = p.dropped_batches;
        stats["oversize_samples"] = p.oversize_samples;
        if (as_arrays) return py::make_tuple(batches_to_buffers(p.batches), stats);
        return py::make_tuple(batches_to_python(p.batches), stats);
      },
      py::arg("lengths"), py::arg("max_tokens"), py::arg("max_batch_size") = 0, py::arg("window_batches") = 400,
      py::arg("seed") = 0, py::arg("epoch") = 0, py::arg("rank") = 0, py::arg("world_size") = 1, py::arg("worker") = 0,
      py::arg("num_workers") = 1, py::arg("even_ranks") = true, py::arg("as_arrays") = false,
      "Batches (lists of sample indices, or with as_arrays=True (indices, offsets) as bytes of little-endian "
      "int64) for one "
      "(rank, worker) and their padding statistics. lengths: a sequence or an int32 numpy array.");

  m.def(
      "random_batches",
      [](const std::vector<int32_t>& lengths, int64_t max_tokens, uint64_t seed, int64_t epoch) {
        std::vector<Batch> b = random_batches(lengths, max_tokens, seed, epoch);
        PaddingStats s = padding_of(b);
        return py::make_tuple(batches_to_python(b), s.waste_pct());
      },
      py::arg("lengths"), py::arg("max_tokens"), py::arg("seed") = 0, py::arg("epoch") = 0,
      "The baseline: shuffled batches to the same token budget without sorting, and their padding waste in %.");
}

}  // namespace stepscope::python
