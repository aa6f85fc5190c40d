// Runs detectors the way DuckDB runs optimizer passes: each through one
// wrapper that skips it when disabled by name, times it, and checks its
// output before it is accepted.
#pragma once

#include <string>
#include <vector>

#include "diagnose/detector.h"
#include "diagnose/detector_part.h"
#include "diagnose/replay_savings.h"

namespace stepscope::diagnose {

// Every detector, in run order: specific causes first, host_overhead last
// (it leaves out host idle that earlier findings claimed).
std::vector<Detector> default_detectors();

struct DetectorRun {
  std::string name;
  Category category = Category::kHostOverhead;
  bool enabled = true;
  double seconds = 0;       // wall time of the run
  size_t findings = 0;      // findings accepted
  size_t rejected = 0;      // findings that failed validation
};

struct RegistryResult {
  std::vector<Finding> findings;  // accepted, in run order
  std::vector<NotAssessed> not_assessed;
  std::vector<DetectorRun> runs;  // one per detector, in run order
  std::vector<std::string> validation_errors;  // "detector: why a finding was rejected"
};

// Every enabled detector's part of one rank, in registry order (null for a
// disabled one): each sees the host idle the earlier ones claimed on the
// rank and the host time their remedies remove. `seconds` (when given)
// gets each detector's collect time added.
std::vector<std::unique_ptr<DetectorPart>> collect_rank(const std::vector<Detector>& detectors,
                                                        const std::vector<bool>& enabled, const RankView& view,
                                                        const DiagnoseOptions& options, size_t ranks_in_set,
                                                        std::vector<double>* seconds = nullptr);

// collect_rank over the context's ranks, each detector's parts merged in
// rank order and finished; findings validated.
// With `replay` (one per rank, context order), each rank's remedies are
// replayed on it as its parts are collected (Finding::replay_pick).
RegistryResult run_detectors(const std::vector<Detector>& detectors, DetectorContext ctx,
                             const std::vector<std::string>& disabled,
                             const std::vector<RankReplayInputs>* replay = nullptr);

// Which of `detectors` run: those not named in `disabled`.
std::vector<bool> enabled_detectors(const std::vector<Detector>& detectors, const std::vector<std::string>& disabled);

// Adds a later rank's (or range's) parts to `merged`, detector by detector
// (null: none for that detector).
void merge_parts(std::vector<std::unique_ptr<DetectorPart>>& merged, std::vector<std::unique_ptr<DetectorPart>> later);

// Each enabled detector's merged part (null: the part of no rank) finished
// into findings, validated against the ranks' attributions (`ranks`, a
// finding's saving at most its rank's mean step); `seconds` per detector
// (may be empty) is collect time added to its run time. run_detectors ends
// with this; `stepscope merge` runs it on parts loaded from summaries.
RegistryResult finish_detectors(const std::vector<Detector>& detectors, const std::vector<bool>& enabled,
                                std::vector<std::unique_ptr<DetectorPart>>& merged, const std::vector<double>& seconds,
                                const JobContext& job, const std::vector<const RankAttribution*>& ranks);

// Empty when `f` is a valid output of `d`, else the reason: category as
// declared, saving finite and within [0, mean step time of its rank], share
// within [0, 100], at most kMaxExamples examples, title and remedy present.
std::string validate_finding(const Finding& f, const Detector& d, const DetectorContext& ctx);
// The same against the ranks' attributions (by RankAttribution::rank).
std::string validate_finding(const Finding& f, const Detector& d, const std::vector<const RankAttribution*>& ranks);

}  // namespace stepscope::diagnose
