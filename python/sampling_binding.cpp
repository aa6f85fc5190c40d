// Python binding of the length-bucketing sampler (src/sampling/): the C++
// core does the work; python/stepscope/sampling.py wraps it as a PyTorch
// batch sampler. Bad options raise ValueError with the core's one-line reason.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

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

}  // namespace

void bind_sampling(py::module_& m) {
  py::register_exception<std::invalid_argument>(m, "InvalidArgument", PyExc_ValueError);

  m.def(
      "bucket_batches",
      [](const std::vector<int32_t>& lengths, int64_t max_tokens, int64_t max_batch_size, int64_t window_batches,
         uint64_t seed, int64_t epoch, int rank, int world_size, int worker, int num_workers, bool even_ranks) {
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
        BatchPlan p = make_batches(lengths, o);
        py::dict stats;
        PaddingStats s = padding_of(p.batches);
        stats["tokens"] = s.tokens;
        stats["padded_tokens"] = s.padded_tokens;
        stats["waste_pct"] = s.waste_pct();
        stats["total_batches"] = p.total_batches;
        stats["dropped_batches"] = p.dropped_batches;
        stats["oversize_samples"] = p.oversize_samples;
        return py::make_tuple(batches_to_python(p.batches), stats);
      },
      py::arg("lengths"), py::arg("max_tokens"), py::arg("max_batch_size") = 0, py::arg("window_batches") = 400,
      py::arg("seed") = 0, py::arg("epoch") = 0, py::arg("rank") = 0, py::arg("world_size") = 1, py::arg("worker") = 0,
      py::arg("num_workers") = 1, py::arg("even_ranks") = true,
      "Batches (lists of sample indices) for one (rank, worker) and their padding statistics.");

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
