// `stepscope diff`: what changed between two runs of a training program
// (before and after a fix). A pure function of two analysed and diagnosed
// trace sets; the CLI loads them and the renderers format the result.
//
//   diff::RunInput before{&stores_a, &ranks_a, &diagnosis_a}, after{...};
//   diff::DiffResult d = diff::diff_runs(before, after, analysis_options, {});
//   d.step.change_pct;                                   // -80.2: 80% faster
//   for (const auto& f : d.findings) if (f.change == diff::FindingChange::kResolved) ...
#pragma once

#include <array>
#include <string>
#include <vector>

#include "diff/change.h"
#include "diff/diff_options.h"
#include "diff/finding_diff.h"
#include "diff/kernel_diff.h"
#include "diff/run_summary.h"

namespace stepscope::diff {

// What each side is, so a reader can judge whether the comparison is fair.
struct RunInfo {
  int64_t ranks = 0;
  int64_t windows = 0;              // step windows over ranks
  bool from_profiler_steps = true;  // windows are ProfilerStep spans on every rank
  std::string device;               // GPU model of the first rank
};

struct BucketChange {
  diagnose::Bucket bucket = diagnose::Bucket::kOtherIdle;
  Change us_per_step;  // mean time per step in the bucket, µs
  Change share_pct;    // share of step time, % (change in percentage points)
};

struct DiffResult {
  RunInfo before;
  RunInfo after;
  Change step_us;                 // mean step wall time, µs
  std::vector<BucketChange> buckets;  // every bucket, in diagnose::Bucket order
  Change busy_pct;                // GPU busy share of step time, % (change in points)
  Change compute_pct;             // share with a computation kernel running, %
  Change effective_compute_pct;   // share in effective compute, %
  std::string primary_before;     // Diagnosis::primary_bottleneck
  std::string primary_after;
  std::vector<FindingDelta> findings;  // resolved, new, persisting
  KernelDiff kernels;
  // Why the comparison may mislead: different GPUs, rank counts, no step markers.
  std::vector<std::string> notes;

  size_t count(FindingChange c) const;
};

// `options` are the analysis options both runs were analysed with.
DiffResult diff_runs(const RunInput& before, const RunInput& after, const analysis::AnalysisOptions& analysis,
                     const DiffOptions& options);

// The same from summaries already made (summarize_run), e.g. to compare one
// run with several others without summarising it again.
DiffResult diff_summaries(const RunSummary& before, const RunSummary& after, const DiffOptions& options);

}  // namespace stepscope::diff
