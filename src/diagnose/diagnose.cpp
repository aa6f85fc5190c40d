#include "diagnose/diagnose.h"

#include <fmt/core.h>

#include <algorithm>
#include <memory>

#include "diagnose/hardware_table.h"

namespace stepscope::diagnose {
namespace {

// Per-rank inputs the detectors read, built once.
struct RankInputs {
  analysis::GpuTimeline timeline;
  HostIndex host;
  std::unique_ptr<HostTree> tree;
};

bool by_saving(const Finding& a, const Finding& b) {
  if (a.estimated_saving_us != b.estimated_saving_us) return a.estimated_saving_us > b.estimated_saving_us;
  if (a.severity != b.severity) return a.severity > b.severity;
  return a.category < b.category;
}

}  // namespace

Diagnosis diagnose(const std::vector<const trace::EventStore*>& stores,
                   const std::vector<analysis::RankAnalysis>& ranks, const analysis::MultiRankAnalysis& multi,
                   const DiagnoseOptions& options) {
  Diagnosis d;
  const size_t n = std::min(stores.size(), ranks.size());
  std::vector<RankInputs> inputs(n);
  d.attribution.resize(n);
  DetectorContext ctx;
  ctx.multi = &multi;
  ctx.options = &options;
  for (size_t i = 0; i < n; ++i) {
    const trace::EventStore& store = *stores[i];
    inputs[i].timeline = analysis::build_gpu_timeline(store, options.analysis);
    inputs[i].host = build_host_index(store);
    inputs[i].tree = std::make_unique<HostTree>(store);
    d.attribution[i] = attribute_steps(store, inputs[i].timeline, ranks[i].steps, inputs[i].host);
    RankView v;
    v.store = &store;
    v.analysis = &ranks[i];
    v.timeline = &inputs[i].timeline;
    v.attribution = &d.attribution[i];
    v.host = &inputs[i].host;
    v.tree = inputs[i].tree.get();
    v.peaks = find_gpu_peaks(store);
    d.hardware.push_back(v.peaks ? std::string(v.peaks->model) : std::string());
    ctx.ranks.push_back(v);
  }

  // Trace-level honesty notes, before any detector.
  for (const RankView& v : ctx.ranks) {
    std::string rank = "rank " + std::to_string(v.store->rank);
    if (v.timeline->activities.empty())
      d.not_assessed.push_back({"attribution", rank + ": step-time attribution",
                                "the trace has no GPU activity (kernels, copies): was the profiler run with "
                                "ProfilerActivity.CUDA?"});
    else if (!v.attribution->from_profiler_steps)
      d.not_assessed.push_back({"attribution", rank + ": per-step attribution",
                                "no ProfilerStep#N markers (call prof.step() every iteration): the GPU's whole active "
                                "span is attributed as one window, and per-step numbers are for that window"});
    if (!v.peaks) {
      std::string name = v.store->meta.devices.empty() ? std::string("(no deviceProperties)")
                                                       : v.store->meta.devices.front().name;
      d.not_assessed.push_back({"hardware_table", rank + ": peak rates",
                                "GPU model '" + name + "' is not in the hardware table: achieved rates are not "
                                "compared with a peak"});
    }
  }

  RegistryResult run = run_detectors(default_detectors(), ctx, options.disabled_detectors);
  d.detectors = std::move(run.runs);
  d.validation_errors = std::move(run.validation_errors);
  for (NotAssessed& na : run.not_assessed) d.not_assessed.push_back(std::move(na));

  // Ranking: largest saving first; below the reporting bar goes to minor.
  std::stable_sort(run.findings.begin(), run.findings.end(), by_saving);
  for (Finding& f : run.findings) {
    bool reported = f.saves_time ? f.estimated_saving_pct >= options.min_saving_pct : f.severity >= Severity::kMedium;
    (reported ? d.findings : d.minor).push_back(std::move(f));
  }

  // Primary bottleneck.
  double lowest = 100.0;
  bool any = false;
  for (const RankAttribution& a : d.attribution) {
    if (a.total.wall_ns() <= 0) continue;
    any = true;
    lowest = std::min(lowest, 100.0 * static_cast<double>(a.total.effective_compute_ns()) /
                                  static_cast<double>(a.total.wall_ns()));
  }
  d.effective_compute_pct = any ? lowest : 0.0;
  d.primary_bottleneck = "none";
  if (!(any && lowest >= options.none_effective_compute_pct)) {
    for (const Finding& f : d.findings) {
      if (f.saves_time && f.estimated_saving_us > 0) {
        d.primary_bottleneck = std::string(to_string(f.category));
        break;
      }
    }
    // Lost time no detector explains: say where it went instead of guessing a cause.
    if (any && d.primary_bottleneck == "none") {
      for (const RankAttribution& a : d.attribution) {
        if (a.total.wall_ns() <= 0) continue;
        Bucket worst = Bucket::kComputeSimtMatmul;
        for (int b = 0; b < kBucketCount; ++b)
          if (!is_effective_compute(static_cast<Bucket>(b)) && a.total.of(static_cast<Bucket>(b)) > a.total.of(worst))
            worst = static_cast<Bucket>(b);
        d.not_assessed.push_back(
            {"ranking", "rank " + std::to_string(a.rank) + ": primary bottleneck",
             fmt::format("{:.0f}% of the step is not effective compute but no detector explains {:.0f}% or more of "
                         "it; the largest share is {} ({:.0f}%)",
                         100.0 - 100.0 * static_cast<double>(a.total.effective_compute_ns()) /
                                     static_cast<double>(a.total.wall_ns()),
                         options.min_saving_pct, to_string(worst), a.total.pct(worst))});
      }
    }
  }
  return d;
}

}  // namespace stepscope::diagnose
