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
  std::vector<const RankAttribution*> ranks;
  for (const RankView& r : ctx.ranks) ranks.push_back(r.attribution);
  return validate_finding(f, d, ranks);
}

std::string validate_finding(const Finding& f, const Detector& d, const std::vector<const RankAttribution*>& ranks) {
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
    for (const RankAttribution* r : ranks)
      if (r->rank == f.saving_rank) step_us = static_cast<double>(r->mean_step_ns()) / 1000.0;
    if (step_us < 0) return fmt::format("saving measured on unknown rank {}", f.saving_rank);
    // Rounding slack of 1 ns per step.
    if (f.estimated_saving_us > step_us + 1e-3)
      return fmt::format("saving {:.1f} us exceeds the mean step time {:.1f} us", f.estimated_saving_us, step_us);
  }
  for (const Metric& m : f.evidence.metrics)
    if (!std::isfinite(m.value)) return fmt::format("metric {} is not a finite number", m.name);
  return {};
}

std::vector<std::unique_ptr<DetectorPart>> collect_rank(const std::vector<Detector>& detectors,
                                                        const std::vector<bool>& enabled, const RankView& view,
                                                        const DiagnoseOptions& options, size_t ranks_in_set,
                                                        std::vector<double>* seconds) {
  std::vector<std::unique_ptr<DetectorPart>> parts(detectors.size());
  RankContext rc{&view, {}, &options, {}, ranks_in_set};
  std::vector<Interval> claimed;
  for (size_t d = 0; d < detectors.size(); ++d) {
    if (!enabled[d]) continue;
    rc.claimed = IntervalSet(claimed);
    const auto t0 = std::chrono::steady_clock::now();
    parts[d] = detectors[d].collect(rc);
    if (seconds) (*seconds)[d] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // What this detector claims or its remedy removes, the later ones leave alone.
    if (const FindingPart* f = parts[d]->finding_part()) {
      for (const RankRemedy& rr : f->remedies)
        rc.priced_host.insert(rc.priced_host.end(), rr.remedy.host_removed.begin(), rr.remedy.host_removed.end());
      for (const IdleClaim& c : f->claims) {
        rc.priced_host.push_back({c.start_ns, c.end_ns});
        claimed.push_back({c.start_ns, c.end_ns});
      }
    }
  }
  return parts;
}

std::vector<bool> enabled_detectors(const std::vector<Detector>& detectors, const std::vector<std::string>& disabled) {
  std::vector<bool> enabled(detectors.size());
  for (size_t d = 0; d < detectors.size(); ++d)
    enabled[d] = std::find(disabled.begin(), disabled.end(), detectors[d].name) == disabled.end();
  return enabled;
}

RegistryResult run_detectors(const std::vector<Detector>& detectors, DetectorContext ctx,
                             const std::vector<std::string>& disabled, const std::vector<RankReplayInputs>* replay) {
  const size_t nd = detectors.size();
  const std::vector<bool> enabled = enabled_detectors(detectors, disabled);
  // Rank by rank, every detector's part; merged in rank order.
  std::vector<double> seconds(nd, 0);
  std::vector<std::unique_ptr<DetectorPart>> merged(nd);
  for (size_t ri = 0; ri < ctx.ranks.size(); ++ri) {
    std::vector<std::unique_ptr<DetectorPart>> parts =
        collect_rank(detectors, enabled, ctx.ranks[ri], *ctx.options, ctx.ranks.size(), &seconds);
    if (replay && ri < replay->size())
      for (auto& p : parts)
        if (FindingPart* f = p ? p->finding_part() : nullptr; f && !f->remedies.empty())
          f->replay = replay_pick((*replay)[ri], f->remedies);
    merge_parts(merged, std::move(parts));
  }
  std::vector<const RankAttribution*> ranks;
  for (const RankView& r : ctx.ranks) ranks.push_back(r.attribution);
  return finish_detectors(detectors, enabled, merged, seconds, {ctx.multi, ctx.options, ctx.ranks.size()}, ranks);
}

void merge_parts(std::vector<std::unique_ptr<DetectorPart>>& merged, std::vector<std::unique_ptr<DetectorPart>> later) {
  if (merged.size() < later.size()) merged.resize(later.size());
  for (size_t d = 0; d < later.size(); ++d) {
    if (!later[d]) continue;
    if (merged[d])
      merged[d]->merge_from(*later[d]);
    else
      merged[d] = std::move(later[d]);
  }
}

RegistryResult finish_detectors(const std::vector<Detector>& detectors, const std::vector<bool>& enabled,
                                std::vector<std::unique_ptr<DetectorPart>>& merged, const std::vector<double>& seconds,
                                const JobContext& job, const std::vector<const RankAttribution*>& ranks) {
  RegistryResult out;
  for (size_t d = 0; d < detectors.size(); ++d) {
    const Detector& det = detectors[d];
    DetectorRun run;
    run.name = det.name;
    run.category = det.category;
    run.enabled = enabled[d];
    if (!run.enabled) {
      out.runs.push_back(run);
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (!merged[d]) merged[d] = det.empty_part();
    DetectorOutput produced = det.finish(*merged[d], job);
    run.seconds = (d < seconds.size() ? seconds[d] : 0.0) +
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (Finding& f : produced.findings) {
      std::string why = validate_finding(f, det, ranks);
      if (!why.empty()) {
        ++run.rejected;
        out.validation_errors.push_back(fmt::format("{}: {}", det.name, why));
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
