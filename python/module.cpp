// The extension module `_stepscope`: python/stepscope/ wraps it.
#include "bindings.h"

PYBIND11_MODULE(_stepscope, m) {
  m.doc() = "stepscope's C++ library, bound for Python";
  stepscope::python::bind_sampling(m);
  stepscope::python::bind_analyze(m);
  stepscope::python::bind_diff(m);
  stepscope::python::bind_plan(m);
  stepscope::python::bind_block_mask(m);
  stepscope::python::bind_memory(m);
  stepscope::python::bind_augment(m);
  stepscope::python::bind_token_gather(m);
  stepscope::python::bind_summary(m);
}
