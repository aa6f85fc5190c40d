// How glibc's malloc hands large freed blocks back, chosen once per process
// from the number of trace files and reading threads (docs/performance.md,
// "glibc's mmap threshold: one rank per thread, or several").
#pragma once

#include <string>
#include <vector>

namespace stepscope::pipeline {

// Call before reading `inputs` (folders, files, globs, as the user gave them)
// on `threads` threads (0 = cores).
void choose_allocator_policy(const std::vector<std::string>& inputs, unsigned threads);

}  // namespace stepscope::pipeline
