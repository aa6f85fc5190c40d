#include "pipeline/allocator_policy.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "trace/trace_reader.h"
#include "trace/trace_set.h"

namespace stepscope::pipeline {

void choose_allocator_policy(const std::vector<std::string>& inputs, unsigned threads) {
#if defined(__GLIBC__)
  std::string error;  // a bad input is reported by the reader
  const size_t files = trace::expand_inputs(inputs, error).size();
  // Each file on a thread of its own: a store's columns are sorted through
  // temporary copies and the analyses build large temporaries, each freed
  // before the next. glibc by default raises its mmap threshold to the size
  // of the first freed block, so later temporaries come from the heap and stay
  // resident once freed; a fixed threshold unmaps them: a lower peak.
  // Several files per thread: nothing is gained by unmapping what the next
  // rank on the same thread allocates again, as fresh pages the kernel has to
  // provide (3-7 us each on the development VM). glibc's own rule lets it
  // reuse them: less CPU, the peak a few percent higher.
  if (files <= trace::reading_threads(threads))
    mallopt(M_MMAP_THRESHOLD, static_cast<int>(trace::kOwnMappingBytes));
#else
  (void)inputs;
  (void)threads;
#endif
}

}  // namespace stepscope::pipeline
