// Knobs of `stepscope diff`, each with the reason for its default.
#pragma once

#include <cstddef>

namespace stepscope::diff {

struct DiffOptions {
  // A kernel counts as slower or faster only when its mean duration changes
  // by more than this share AND by more than kernel_mean_change_us. Kernel
  // means of the same program move by a few % between profiled runs (clocks,
  // placement), and sub-µs kernels jitter by a large share of their length,
  // so both bars are needed to keep noise out of the lists. %.
  double kernel_mean_change_pct = 5.0;
  double kernel_mean_change_us = 1.0;

  // A kernel with an unchanged mean counts as called more or less often when
  // its calls per step change by more than this share, % (the same run-to-run
  // bar; call counts of one program are usually exact, so this only hides
  // rounding of counts over unequal step numbers).
  double kernel_count_change_pct = 5.0;

  // Kernels kept per change list (added, removed, slower, ...), largest
  // change of time per step first. The totals of each list cover all of it.
  size_t top_kernels = 10;
};

}  // namespace stepscope::diff
