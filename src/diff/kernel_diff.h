// Kernels matched by name between two runs and sorted into what changed:
// added, removed, slower, faster, called more, called less. All numbers are
// per step (see run_summary.h).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/kernel_class.h"
#include "diff/change.h"
#include "diff/diff_options.h"
#include "diff/run_summary.h"

namespace stepscope::diff {

enum class KernelChange : uint8_t {
  kRemoved,     // runs before, not after
  kAdded,       // runs after, not before
  kSlower,      // mean duration up by more than both thresholds
  kFaster,      // mean duration down by more than both thresholds
  kCalledMore,  // mean unchanged, calls per step up by more than kernel_count_change_pct
  kCalledLess,  // mean unchanged, calls per step down by more than kernel_count_change_pct
};
constexpr int kKernelChangeCount = 6;

std::string_view to_string(KernelChange c);  // "removed", "added", "slower", "faster", "called_more", "called_less"

// A kernel's use on one side; all zero when it does not run there.
struct KernelSide {
  double count_per_step = 0;  // calls per step
  double us_per_step = 0;     // time per step, µs
  double mean_us = 0;         // mean duration, µs
};

struct KernelDelta {
  std::string name;
  analysis::KernelClass cls = analysis::KernelClass::kComputation;
  analysis::KernelFamily family = analysis::KernelFamily::kOther;
  KernelChange change = KernelChange::kAdded;
  KernelSide before;
  KernelSide after;
  double us_per_step_change = 0;  // after - before, µs per step
  double mean_change_pct = 0;     // 100 * (after mean - before mean) / before mean, % (0 when either side is absent)
};

struct KernelChangeList {
  KernelChange change = KernelChange::kAdded;
  size_t kernels = 0;             // names with this change (all of them, not only those listed)
  double us_per_step_change = 0;  // sum of their time-per-step changes, µs
  std::vector<KernelDelta> top;   // at most options.top_kernels, largest |time per step change| first
};

struct KernelDiff {
  std::vector<KernelChangeList> lists;  // one per KernelChange, in enum order
  size_t unchanged = 0;   // names on both sides with no change past the thresholds
  Change count_per_step;  // GPU activities per step (RunSummary::kernels_per_step)
  Change us_per_step;     // sum of their durations per step, µs (RunSummary::kernel_us_per_step)

  const KernelChangeList& list(KernelChange c) const { return lists[static_cast<size_t>(c)]; }
};

// Both kernel vectors must be sorted by name (as summarize_run leaves them).
KernelDiff diff_kernels(const RunSummary& before, const RunSummary& after, const DiffOptions& options);

}  // namespace stepscope::diff
