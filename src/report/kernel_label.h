// A short terminal label for a kernel name. Templated PyTorch kernel names
// run to hundreds of characters, and cutting them at a fixed width leaves
// only their common head ("void at::native::vectorized_elementwise_kernel<8,
// at::nat..."), so rows that differ only in the functor look the same. The
// label drops what every such name shares (the return type, the argument
// list, the at::native / c10 / anonymous namespaces) before cutting. The
// JSON reports keep names whole.
#pragma once

#include <string>
#include <string_view>

namespace stepscope::report {

std::string kernel_label(std::string_view name, size_t max_chars);

}  // namespace stepscope::report
