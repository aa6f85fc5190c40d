// The diagnosis of a trace set: where every step's time went (attribution),
// what caused the lost time (findings, largest saving first), the primary
// bottleneck, and what could not be judged from these traces.
//
//   std::vector<analysis::RankAnalysis> ranks = ...;   // analyze_rank per store
//   diagnose::Diagnosis d = diagnose::diagnose(stores, ranks, multi, {});
//   for (const auto& f : d.findings) ...               // sorted by estimated saving
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/multi_rank.h"
#include "analysis/rank_analysis.h"
#include "diagnose/detector.h"
#include "diagnose/detector_registry.h"
#include "diagnose/diagnose_options.h"
#include "diagnose/finding.h"
#include "diagnose/replay_savings.h"
#include "diagnose/step_attribution.h"
#include "trace/event_store.h"
#include "whatif/rank_critical_path.h"
#include "whatif/job_critical_path.h"
#include "whatif/job_replay.h"
#include "whatif/rank_replay.h"

namespace stepscope::diagnose {

// The remedies of the findings of some categories replayed together
// (DiagnoseOptions::what_if), like the combined saving.
struct WhatIf {
  std::vector<std::string> categories;  // as asked, each once
  std::vector<std::string> not_found;   // asked, but no time-saving finding of that category (reported or minor)
  double saving_us = 0;                 // on the rank where it is largest, per step of the run without the profiler
  double saving_pct = 0;                // % of that rank's unprofiled step
  int64_t rank = -1;                    // -1: no rank could be replayed, or nothing to apply
};

struct Diagnosis {
  std::vector<RankAttribution> attribution;  // one per rank, rank order
  std::vector<whatif::RankReplay> replay;     // one per rank: the replay's fidelity (docs/whatif.md)
  std::vector<whatif::RankCriticalPath> critical_path;  // one per rank: each step's critical path (docs/whatif.md)
  // The ranks replayed as one job, tied at their collectives (two or more
  // ranks; ranks == 0 otherwise): its fidelity (docs/whatif.md).
  whatif::JobReplay job_replay;
  // Each step's critical path across those ranks: it crosses to the rank
  // that arrived last at a collective (docs/whatif.md; empty ranks: none).
  whatif::JobCriticalPath job_critical_path;
  // Findings whose saving reaches options.min_saving_pct (and findings that
  // save no time but carry a medium or high risk), largest saving first. In a
  // healthy run (primary "none") only compute_efficiency findings among those
  // that save time: no waiting cause can explain more than the idle rest.
  std::vector<Finding> findings;
  std::vector<Finding> minor;  // the rest, largest saving first
  // Category of the top time-saving finding, or "none" when every rank spends
  // at least options.none_effective_compute_pct of its steps in effective
  // compute, or when nothing was found.
  std::string primary_bottleneck = "none";
  double effective_compute_pct = 0;  // lowest over ranks of effective compute / wall, %
  std::vector<NotAssessed> not_assessed;
  std::vector<DetectorRun> detectors;
  std::vector<std::string> validation_errors;  // rejected detector output (a bug if non-empty)
  std::vector<std::string> hardware;            // per rank: the hardware-table row used, or "" if none
  // When no rank has GPU activity to attribute because the traces were
  // recorded with CUPTI's range profiler: that reason ("" otherwise).
  std::string no_gpu_activity_reason;
  // All reported findings' remedies replayed together, on the rank where
  // they save most: µs per step of the run without the profiler, and % of
  // that rank's unprofiled step. Never more than the step; not the sum of
  // the findings' savings. saving_rank -1: no rank could be replayed.
  double combined_saving_us = 0;
  double combined_saving_pct = 0;
  int64_t combined_saving_rank = -1;
  // The what-if asked for (options.what_if), when asked.
  std::optional<WhatIf> what_if;
};

// `stores` and `ranks` are parallel (rank order); `multi` may be empty for one rank.
Diagnosis diagnose(const std::vector<const trace::EventStore*>& stores,
                   const std::vector<analysis::RankAnalysis>& ranks, const analysis::MultiRankAnalysis& multi,
                   const DiagnoseOptions& options);

// The set-level steps of diagnose, which `stepscope merge` runs on what the
// ranks' summaries carry (pipeline/merge_run.cpp), in this order:
//
// The trace-level notes (no GPU activity, counters instead, no ProfilerStep
// markers, a GPU not in the hardware table), one per reason naming its
// ranks, from d.attribution and the ranks' analyses (rank order);
// `has_peaks` per rank: a hardware-table row (or override) was used.
void add_trace_notes(Diagnosis& d, const std::vector<const analysis::RankAnalysis*>& ranks,
                     const std::vector<bool>& has_peaks);
// The detectors' run into `d`: their runs, rejected findings and notes;
// replay savings (a finding's replay pick, else its remedies replayed on
// `replay`, which may be empty); the ranking, reported or minor by the
// options' bars and the healthy check (d.attribution); the primary bottleneck.
void rank_findings(Diagnosis& d, RegistryResult run, const std::vector<RankReplayInputs>& replay,
                   const DiagnoseOptions& options);
// In a run that is not healthy where no finding explains the lost time: a
// note naming where it went on the rank with the least effective compute.
void add_ranking_note(Diagnosis& d, const DiagnoseOptions& options);

}  // namespace stepscope::diagnose
