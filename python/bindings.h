// The parts of the extension module `_stepscope`, one file each; module.cpp
// puts them together. Each binds a library entry point as thinly as it can:
// the work, the checks and the errors are the library's.
#pragma once

#include <pybind11/pybind11.h>

namespace stepscope::python {

void bind_sampling(pybind11::module_& m);  // sampling_binding.cpp
void bind_analyze(pybind11::module_& m);   // analyze_binding.cpp
void bind_diff(pybind11::module_& m);      // diff_binding.cpp
void bind_plan(pybind11::module_& m);      // plan_binding.cpp
void bind_block_mask(pybind11::module_& m);  // block_mask_binding.cpp
void bind_memory(pybind11::module_& m);      // memory_binding.cpp
void bind_augment(pybind11::module_& m);     // augment_binding.cpp
void bind_token_gather(pybind11::module_& m);  // token_gather_binding.cpp
void bind_summary(pybind11::module_& m);       // summary_binding.cpp

}  // namespace stepscope::python
