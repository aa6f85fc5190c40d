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

// Empty when `f` is a valid output of `d`, else the reason: category as
// declared, saving finite and within [0, mean step time of its rank], share
// within [0, 100], at most kMaxExamples examples, title and remedy present.
std::string validate_finding(const Finding& f, const Detector& d, const DetectorContext& ctx);

}  // namespace stepscope::diagnose
