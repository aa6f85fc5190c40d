// The contract between the registry and the detectors: what a detector may
// read (one rank's view when collecting; its merged part and the cross-rank
// results when finishing) and what it returns. Both halves are pure
// functions of what they are given.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "analysis/gpu_timeline.h"
#include "analysis/multi_rank.h"
#include "analysis/rank_analysis.h"
#include "diagnose/diagnose_options.h"
#include "diagnose/finding.h"
#include "model/gpu_table.h"
#include "diagnose/host_index.h"
#include "diagnose/host_tree.h"
#include "diagnose/step_attribution.h"
#include "trace/event_store.h"

namespace stepscope::diagnose {

using model::GpuPeaks;

// Everything about one rank a detector may read.
struct RankView {
  const trace::EventStore* store = nullptr;
  const analysis::RankAnalysis* analysis = nullptr;
  const analysis::GpuTimeline* timeline = nullptr;
  const RankAttribution* attribution = nullptr;
  const HostIndex* host = nullptr;
  const HostTree* tree = nullptr;
  const GpuPeaks* peaks = nullptr;  // nullptr: the GPU model is not in the hardware table
};

// The ranks of a set, for validating findings.
struct DetectorContext {
  std::vector<RankView> ranks;  // rank order
  const analysis::MultiRankAnalysis* multi = nullptr;
  const DiagnoseOptions* options = nullptr;
};

// Something a detector could not judge on this trace, and why.
struct NotAssessed {
  std::string detector;  // detector name
  std::string what;      // the check that was skipped
  std::string reason;    // what the trace lacks (and how to record it)
};

struct DetectorOutput {
  std::vector<Finding> findings;
  std::vector<NotAssessed> not_assessed;
};

struct RankContext;
struct JobContext;
class DetectorPart;

// A detector in two halves (detector_part.h): `collect` reads one rank and
// returns its part, parts of several ranks merge, and `finish` turns the
// merged part into findings. A diagnosis can so be made a rank at a time
// and merged from per-rank summaries.
struct Detector {
  std::string name;   // unique, snake_case; used to disable it
  Category category;  // every finding it returns has this category
  std::function<std::unique_ptr<DetectorPart>(const RankContext&)> collect;
  std::function<DetectorOutput(const DetectorPart&, const JobContext&)> finish;
  std::function<std::unique_ptr<DetectorPart>()> empty_part;  // the part of no rank
  // A part from its JSON form (DetectorPart::save); throws
  // nlohmann::json::exception on a form it does not have.
  std::function<std::unique_ptr<DetectorPart>(const nlohmann::json&)> load;
};

}  // namespace stepscope::diagnose
