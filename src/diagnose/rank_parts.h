// One rank's detector parts in the form a summary file carries (docs/
// distributed.md, "How the diagnosis is made a rank at a time"): every
// detector's part of the rank, collected as `analyze` collects it, with each
// remedy replayed on the rank (Finding::ReplayPick), as a JSON object keyed
// by detector name. `stepscope summarize` writes it; the merge reads it back
// with load_rank_parts, renumbers the rank and merges.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/rank_analysis.h"
#include "diagnose/detector.h"
#include "diagnose/detector_part.h"
#include "diagnose/diagnose_options.h"
#include "diagnose/step_attribution.h"
#include "trace/event_store.h"
#include "whatif/rank_critical_path.h"
#include "whatif/rank_replay.h"

namespace stepscope::diagnose {

// What the diagnosis of a set reports of one rank besides the detectors'
// findings, as a summary carries it: the same values diagnose() makes.
struct RankDiagnosis {
  RankAttribution attribution;  // without its spans (the parts hold what the detectors read of them)
  whatif::RankReplay replay;    // combined_saving_ns -1: it needs the reported findings' remedies
  whatif::RankCriticalPath critical_path;  // without the spans (they draw the path on the timeline)
  std::string hardware;  // the hardware-table row used, "" when the GPU is not in it
};

struct CollectedRank {
  nlohmann::json parts;  // every detector's part, keyed by detector name
  RankDiagnosis report;
};

// `ranks_in_set`: the number of ranks of the set the rank belongs to (a
// detector falls back on it for a trace that does not record its world size).
// Every example in the parts is placed in its step and at its source line
// (example_place.h) here, where the store is: the merge has only the steps.
CollectedRank collect_rank_parts(const trace::EventStore& store, const analysis::RankAnalysis& analysis,
                                 const DiagnoseOptions& options, size_t ranks_in_set);

// The parts back, one per detector of `detectors` (null where the form has
// none: a detector disabled when it was collected), renumbered to `rank`.
// Throws std::runtime_error naming the detector for a form it does not
// have, or a detector name it does not know.
std::vector<std::unique_ptr<DetectorPart>> load_rank_parts(const nlohmann::json& forms,
                                                           const std::vector<Detector>& detectors, int64_t rank);

}  // namespace stepscope::diagnose
