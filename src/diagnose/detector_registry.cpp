#include "diagnose/detector_registry.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "diagnose/detector_part.h"
#include "diagnose/detector_support.h"
#include "diagnose/detectors/detectors.h"

namespace stepscope::diagnose {

std::vector<Detector> default_detectors() {
  return {
      data_pipeline_detector(),       host_sync_detector(),          memory_allocator_detector(),
      memory_capacity_detector(),     compute_efficiency_detector(), communication_detector(),
      load_imbalance_detector(),      unfused_optimizer_detector(),  recomputed_constants_detector(),
      fusion_opportunity_detector(),  host_overhead_detector(),
  };
}

std::string validate_finding(const Finding& f, const Detector& d, const DetectorContext& ctx) {
  if (f.category != d.category)
    return fmt::format("category {} differs from the detector's {}", to_string(f.category), to_string(d.category));
  if (f.detector != d.name) return fmt::format("detector name '{}' differs from '{}'", f.detector, d.name);
  if (f.title.empty()) return "empty title";
  if (f.remedy.empty()) return "empty remedy";
  if (f.evidence.examples.size() > kMaxExamples)
    return fmt::format("{} examples (at most {})", f.evidence.examples.size(), kMaxExamples);
  if (!std::isfinite(f.estimated_saving_us) || !std::isfinite(f.estimated_saving_pct))
    return "saving is not a finite number";
  if (f.estimated_saving_us < 0) return fmt::format("negative saving {} us", f.estimated_saving_us);
  if (f.estimated_saving_pct < 0 || f.estimated_saving_pct > 100)
    return fmt::format("saving share {}% outside [0, 100]", f.estimated_saving_pct);
  if (!f.saves_time && f.estimated_saving_us != 0) return "a finding that saves no time carries a saving";
  if (f.estimated_saving_us > 0) {
    double step_us = -1;
    for (const RankView& r : ctx.ranks)
      if (r.store->rank == f.saving_rank) step_us = static_cast<double>(r.attribution->mean_step_ns()) / 1000.0;
    if (step_us < 0) return fmt::format("saving measured on unknown rank {}", f.saving_rank);
    // Rounding slack of 1 ns per step.
    if (f.estimated_saving_us > step_us + 1e-3)
      return fmt::format("saving {:.1f} us exceeds the mean step time {:.1f} us", f.estimated_saving_us, step_us);
  }
  for (const Metric& m : f.evidence.metrics)
    if (!std::isfinite(m.value)) return fmt::format("metric {} is not a finite number", m.name);
  return {};
}

namespace {

// A split detector over a whole context: each rank's part, merged in rank
// order, then finished. The claims of the findings accepted so far
// (ctx.prior) are what each rank's collect sees as claimed.
DetectorOutput run_split(const Detector& d, const DetectorContext& ctx) {
  std::unique_ptr<DetectorPart> merged = d.empty_part();
  for (size_t ri = 0; ri < ctx.ranks.size(); ++ri) {
    std::unique_ptr<DetectorPart> part = d.collect(rank_context(ctx, ri));
    if (ri == 0)
      merged = std::move(part);
    else
      merged->merge_from(*part);
  }
  return d.finish(*merged, JobContext{ctx.multi, ctx.options, ctx.ranks.size()});
}

}  // namespace

RegistryResult run_detectors(const std::vector<Detector>& detectors, DetectorContext ctx,
                             const std::vector<std::string>& disabled) {
  RegistryResult out;
  ctx.prior = &out.findings;
  for (const Detector& d : detectors) {
    DetectorRun run;
    run.name = d.name;
    run.category = d.category;
    run.enabled = std::find(disabled.begin(), disabled.end(), d.name) == disabled.end();
    if (!run.enabled) {
      out.runs.push_back(run);
      continue;
    }
    auto t0 = std::chrono::steady_clock::now();
    DetectorOutput produced = d.split() ? run_split(d, ctx) : d.run(ctx);
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (Finding& f : produced.findings) {
      std::string why = validate_finding(f, d, ctx);
      if (!why.empty()) {
        ++run.rejected;
        out.validation_errors.push_back(fmt::format("{}: {}", d.name, why));
        continue;
      }
      ++run.findings;
      out.findings.push_back(std::move(f));
    }
    for (NotAssessed& n : produced.not_assessed) out.not_assessed.push_back(std::move(n));
    out.runs.push_back(run);
  }
  return out;
}

}  // namespace stepscope::diagnose
