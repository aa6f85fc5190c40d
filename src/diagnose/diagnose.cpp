#include "diagnose/diagnose.h"

#include "diagnose/rank_inputs.h"

#include <fmt/core.h>

#include <algorithm>
#include <memory>

#include "model/gpu_table.h"
#include "diagnose/replay_savings.h"
#include "diagnose/example_place.h"

namespace stepscope::diagnose {

namespace {

// Per-rank inputs of the detectors and the replay, built once.
struct RankState : RankInputs {
  RankReplayState replay;
};

// The largest of per-rank savings (ns, -1: not replayed) as µs, % of that
// rank's unprofiled step, and the rank; rank stays -1 when none was replayed.
void largest_saving(const std::vector<int64_t>& per_rank, const std::vector<RankState>& inputs,
                    const std::vector<const trace::EventStore*>& stores, double& us, double& pct, int64_t& rank) {
  for (size_t i = 0; i < per_rank.size(); ++i) {
    if (per_rank[i] < 0 || inputs[i].replay.baseline.unprofiled_step_ns <= 0) continue;
    const double x = static_cast<double>(per_rank[i]) / 1000.0;
    if (rank < 0 || x > us) {
      us = x;
      pct = 100.0 * static_cast<double>(per_rank[i]) / static_cast<double>(inputs[i].replay.baseline.unprofiled_step_ns);
      rank = stores[i]->rank;
    }
  }
}

bool by_saving(const Finding& a, const Finding& b) {
  if (a.estimated_saving_us != b.estimated_saving_us) return a.estimated_saving_us > b.estimated_saving_us;
  if (a.severity != b.severity) return a.severity > b.severity;
  return a.category < b.category;
}

}  // namespace

void add_trace_notes(Diagnosis& d, const std::vector<const analysis::RankAnalysis*>& ranks,
                     const std::vector<bool>& has_peaks) {
  // One note per reason, naming the ranks it applies to (a set can hold
  // thousands of ranks).
  std::vector<std::pair<NotAssessed, std::vector<int64_t>>> per_rank;
  auto note = [&](NotAssessed n, int64_t rank) {
    for (auto& [have, ranks] : per_rank)
      if (have.detector == n.detector && have.what == n.what && have.reason == n.reason) {
        ranks.push_back(rank);
        return;
      }
    per_rank.push_back({std::move(n), {rank}});
  };
  bool any_gpu_activity = false;
  for (size_t i = 0; i < ranks.size() && i < d.attribution.size(); ++i) {
    const analysis::RankAnalysis& a = *ranks[i];
    const RankAttribution& att = d.attribution[i];
    any_gpu_activity = any_gpu_activity || att.gpu_activity;
    if (!att.gpu_activity) {
      // A range-profiler session records counters instead of kernel activity:
      // asking for ProfilerActivity.CUDA would send the user the wrong way.
      const bool counters_instead = a.counters.ranges > 0;
      std::string reason = counters_instead
                               ? "the trace was recorded with CUPTI's range profiler (torch.profiler profiler_metrics): "
                                 "it holds hardware counters per kernel, not kernel times; profile without "
                                 "profiler_metrics to attribute step time"
                               : "the trace has no GPU activity (kernels, copies): was the profiler run with "
                                 "ProfilerActivity.CUDA?";
      if (counters_instead && d.no_gpu_activity_reason.empty()) d.no_gpu_activity_reason = reason;
      note({"attribution", "step-time attribution", std::move(reason)}, a.rank);
    } else if (!att.from_profiler_steps)
      note({"attribution", "per-step attribution",
            "no ProfilerStep#N markers (call prof.step() every iteration): the GPU's whole active span is "
            "attributed as one window, and per-step numbers are for that window"},
           a.rank);
    if (i < has_peaks.size() && !has_peaks[i]) {
      std::string name = a.origin.device ? a.origin.device->name : std::string("(no deviceProperties)");
      note({"hardware_table", "peak rates",
            "GPU model '" + name + "' is not in the hardware table: achieved rates are not compared with a peak"},
           a.rank);
    }
  }
  if (any_gpu_activity) d.no_gpu_activity_reason.clear();
  for (auto& [n, ranks] : per_rank) {
    std::string who = ranks.size() == 1 ? fmt::format("rank {}", ranks.front())
                                        : fmt::format("{} ranks (first {})", ranks.size(), ranks.front());
    n.what = who + ": " + n.what;
    d.not_assessed.push_back(std::move(n));
  }
}

namespace {

// The lowest effective-compute share over ranks with steps (%), and whether any has steps.
bool lowest_effective_compute(const Diagnosis& d, double& lowest) {
  lowest = 100.0;
  bool any = false;
  for (const RankAttribution& a : d.attribution) {
    if (a.total.wall_ns() <= 0) continue;
    any = true;
    lowest = std::min(lowest, 100.0 * static_cast<double>(a.total.effective_compute_ns()) /
                                  static_cast<double>(a.total.wall_ns()));
  }
  return any;
}

}  // namespace

void rank_findings(Diagnosis& d, RegistryResult run, const std::vector<RankReplayInputs>& replay,
                   const DiagnoseOptions& options) {
  d.detectors = std::move(run.runs);
  d.validation_errors = std::move(run.validation_errors);
  for (NotAssessed& na : run.not_assessed) d.not_assessed.push_back(std::move(na));

  // Primary bottleneck.
  double lowest = 100.0;
  const bool any = lowest_effective_compute(d, lowest);
  d.effective_compute_pct = any ? lowest : 0.0;
  // A healthy run: every rank computes at least the bar. Then no waiting
  // cause can explain more than the rest of the step, and only findings that
  // make the computation itself faster (or warn of memory) are reported.
  const bool healthy = any && lowest >= options.none_effective_compute_pct;

  // Savings by replay of the run without the profiler, where a remedy model exists.
  apply_replay_savings(run.findings, replay);

  // Ranking: largest saving first; below the reporting bar goes to minor.
  std::stable_sort(run.findings.begin(), run.findings.end(), by_saving);
  for (Finding& f : run.findings) {
    bool reported = f.saves_time ? f.estimated_saving_pct >= options.min_saving_pct : f.severity >= Severity::kMedium;
    if (healthy && f.saves_time && f.category != Category::kComputeEfficiency) reported = false;
    (reported ? d.findings : d.minor).push_back(std::move(f));
  }

  // The top reported finding that saves time, in a healthy run too: there it
  // can only make the computation faster (TF32 matmuls keep the GPU busy at
  // half the bf16 rate), and a reported one is the largest thing to fix.
  d.primary_bottleneck = "none";
  for (const Finding& f : d.findings) {
    if (f.saves_time && f.estimated_saving_us > 0) {
      d.primary_bottleneck = std::string(to_string(f.category));
      break;
    }
  }
}

void add_ranking_note(Diagnosis& d, const DiagnoseOptions& options) {
  double lowest = 100.0;
  const bool any = lowest_effective_compute(d, lowest);
  if (any && lowest >= options.none_effective_compute_pct) return;  // healthy
  bool any_gpu_activity = false;
  for (const RankAttribution& a : d.attribution) any_gpu_activity = any_gpu_activity || a.gpu_activity;
  // Lost time no finding explains: say where it went (on the rank with the
  // least effective compute) instead of guessing a cause. Not without any
  // GPU activity: all of it would be "idle" of a GPU that was not traced.
  if (!any || !any_gpu_activity || d.primary_bottleneck != "none") return;
  const RankAttribution* worst_rank = nullptr;
  double worst_share = 101.0;
  for (const RankAttribution& a : d.attribution) {
    if (a.total.wall_ns() <= 0) continue;
    double share = 100.0 * static_cast<double>(a.total.effective_compute_ns()) / static_cast<double>(a.total.wall_ns());
    if (share < worst_share) worst_share = share, worst_rank = &a;
  }
  Bucket largest = Bucket::kComputeSimtMatmul;
  for (int b = 0; b < kBucketCount; ++b)
    if (!is_effective_compute(static_cast<Bucket>(b)) &&
        worst_rank->total.of(static_cast<Bucket>(b)) > worst_rank->total.of(largest))
      largest = static_cast<Bucket>(b);
  d.not_assessed.push_back(
      {"ranking", "rank " + std::to_string(worst_rank->rank) + ": primary bottleneck",
       fmt::format("{:.0f}% of the step is not effective compute but no finding explains {:.0f}% or more of the "
                   "step; the largest share is {} ({:.0f}%)",
                   100.0 - worst_share, options.min_saving_pct, to_string(largest), worst_rank->total.pct(largest))});
}

Diagnosis diagnose(const std::vector<const trace::EventStore*>& stores,
                   const std::vector<analysis::RankAnalysis>& ranks, const analysis::MultiRankAnalysis& multi,
                   const DiagnoseOptions& options) {
  Diagnosis d;
  const size_t n = std::min(stores.size(), ranks.size());
  std::vector<RankState> inputs(n);
  d.attribution.resize(n);
  DetectorContext ctx;
  ctx.multi = &multi;
  ctx.options = &options;
  for (size_t i = 0; i < n; ++i) {
    const trace::EventStore& store = *stores[i];
    static_cast<RankInputs&>(inputs[i]) = prepare_rank(store, options);
    d.attribution[i] = attribute_rank(inputs[i], store, ranks[i]);
    if (options.replay) inputs[i].replay = replay_rank(inputs[i], store, ranks[i], options);
    report_replay(store, inputs[i], options.replay ? &inputs[i].replay : nullptr, d.replay.emplace_back(),
                  d.critical_path.emplace_back());
    const RankView v = view_of(inputs[i], d.attribution[i], store, ranks[i], options);
    d.hardware.push_back(v.peaks ? std::string(v.peaks->model) : std::string());
    ctx.ranks.push_back(v);
  }
  if (n >= 2 && options.replay) {
    std::vector<whatif::JobRankInput> job;
    for (size_t i = 0; i < n; ++i)
      job.push_back({stores[i]->rank, &inputs[i].replay.graph, &inputs[i].timeline, &ranks[i].collectives,
                     stores[i]->meta.base_time_ns, stores[i]->meta.world_size.value_or(0)});
    const whatif::JobGraph graph = whatif::build_job_graph(job, multi.clocks);
    d.job_replay = whatif::summarize_job_replay(graph);
    d.job_critical_path = whatif::summarize_job_critical_path(graph);
  }

  std::vector<const analysis::RankAnalysis*> analyses;
  std::vector<bool> has_peaks;
  for (size_t i = 0; i < n; ++i) {
    analyses.push_back(&ranks[i]);
    has_peaks.push_back(ctx.ranks[i].peaks != nullptr);
  }
  add_trace_notes(d, analyses, has_peaks);

  // The run without the profiler, replayed per rank where a remedy model exists.
  std::vector<RankReplayInputs> replay_inputs;
  for (size_t i = 0; i < n; ++i)
    replay_inputs.push_back({stores[i]->rank, &inputs[i].replay.graph, &inputs[i].timeline,
                             &inputs[i].replay.baseline, inputs[i].replay.faithful});
  RegistryResult run = run_detectors(default_detectors(), ctx, options.disabled_detectors,
                                     options.replay_as_collected ? &replay_inputs : nullptr);
  rank_findings(d, std::move(run), replay_inputs, options);

  // What the reported findings save together, per rank (not their sum: a
  // remedy can take away time another would have saved).
  const std::vector<int64_t> combined = combined_savings(d.findings, replay_inputs);
  for (size_t i = 0; i < n; ++i) d.replay[i].combined_saving_ns = combined[i];
  largest_saving(combined, inputs, stores, d.combined_saving_us, d.combined_saving_pct, d.combined_saving_rank);

  // The what-if asked for: the named categories' findings, reported or minor.
  if (!options.what_if.empty()) {
    WhatIf w;
    std::vector<const Finding*> chosen;
    for (const std::string& name : options.what_if) {
      // A name given twice counts once (its remedies would apply twice).
      if (std::find(w.categories.begin(), w.categories.end(), name) != w.categories.end()) continue;
      w.categories.push_back(name);
      size_t before = chosen.size();
      for (const auto* list : {&d.findings, &d.minor})
        for (const Finding& f : *list)
          if (f.saves_time && to_string(f.category) == name) chosen.push_back(&f);
      if (chosen.size() == before) w.not_found.push_back(name);
    }
    if (!chosen.empty())
      largest_saving(combined_savings(chosen, replay_inputs), inputs, stores, w.saving_us, w.saving_pct, w.rank);
    d.what_if = std::move(w);
  }

  // Evidence in the user's terms: time into the step, and the user's code
  // where the traces have Python stacks.
  for (size_t i = 0; i < n; ++i) {
    place_examples(d.findings, *stores[i], *inputs[i].tree, ranks[i].steps);
    place_examples(d.minor, *stores[i], *inputs[i].tree, ranks[i].steps);
  }
  add_ranking_note(d, options);
  return d;
}

}  // namespace stepscope::diagnose
