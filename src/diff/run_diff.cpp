#include "diff/run_diff.h"

#include <fmt/format.h>

namespace stepscope::diff {
namespace {

RunInfo info_of(const RunSummary& s) { return {s.ranks, s.windows, s.from_profiler_steps, s.device}; }

double share(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

std::vector<std::string> notes_for(const RunSummary& b, const RunSummary& a) {
  std::vector<std::string> notes;
  if (!b.device.empty() && !a.device.empty() && b.device != a.device)
    notes.push_back(fmt::format("the runs used different GPUs ({} before, {} after): kernel times differ for that "
                                "reason too",
                                b.device, a.device));
  if (b.ranks != a.ranks)
    notes.push_back(fmt::format("the runs have different rank counts ({} before, {} after): per-step numbers are "
                                "per rank",
                                b.ranks, a.ranks));
  auto no_steps = [&](const RunSummary& s, const char* side) {
    if (s.ranks > 0 && !s.from_profiler_steps)
      notes.push_back(fmt::format("the {} run has no ProfilerStep#N markers on some rank: its one window is the "
                                  "GPU's whole active span, not a step",
                                  side));
  };
  no_steps(b, "before");
  no_steps(a, "after");
  if (b.windows == 0) notes.push_back("the before run has no step windows (no GPU activity): nothing to compare");
  if (a.windows == 0) notes.push_back("the after run has no step windows (no GPU activity): nothing to compare");
  return notes;
}

}  // namespace

size_t DiffResult::count(FindingChange c) const {
  size_t n = 0;
  for (const auto& f : findings) n += f.change == c;
  return n;
}

DiffResult diff_summaries(const RunSummary& b, const RunSummary& a, const DiffOptions& options) {
  DiffResult d;
  d.before = info_of(b);
  d.after = info_of(a);
  d.step_us = change_of(b.step_us, a.step_us);
  for (size_t i = 0; i < b.bucket_us.size(); ++i) {
    BucketChange bc;
    bc.bucket = static_cast<diagnose::Bucket>(i);
    bc.us_per_step = change_of(b.bucket_us[i], a.bucket_us[i]);
    bc.share_pct = change_of(share(b.bucket_us[i], b.step_us), share(a.bucket_us[i], a.step_us));
    d.buckets.push_back(bc);
  }
  d.busy_pct = change_of(b.busy_pct, a.busy_pct);
  d.compute_pct = change_of(b.compute_pct, a.compute_pct);
  d.effective_compute_pct = change_of(b.effective_compute_pct, a.effective_compute_pct);
  d.primary_before = b.primary_bottleneck;
  d.primary_after = a.primary_bottleneck;
  d.findings = diff_findings(b.findings, b.minor, a.findings, a.minor);
  d.kernels = diff_kernels(b, a, options);
  d.notes = notes_for(b, a);
  return d;
}

DiffResult diff_runs(const RunInput& before, const RunInput& after, const analysis::AnalysisOptions& analysis,
                     const DiffOptions& options) {
  return diff_summaries(summarize_run(before, analysis), summarize_run(after, analysis), options);
}

}  // namespace stepscope::diff
