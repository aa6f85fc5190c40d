// The contract between the registry and the detectors: what a detector may
// read (one view per rank plus the cross-rank results) and what it returns.
// Detectors are pure functions of the context.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

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

struct DetectorContext {
  std::vector<RankView> ranks;  // rank order
  const analysis::MultiRankAnalysis* multi = nullptr;
  const DiagnoseOptions* options = nullptr;
  // Findings of the detectors that ran earlier (registry order), so a
  // general detector can leave out what a specific one already explains.
  const std::vector<Finding>* prior = nullptr;
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

// A detector is one function of the whole context (`run`), or split in two
// (`collect` per rank, `finish` of the merged parts; detector_part.h) so
// that a diagnosis can be merged from per-rank summaries.
struct Detector {
  std::string name;   // unique, snake_case; used to disable it
  Category category;  // every finding it returns has this category
  std::function<DetectorOutput(const DetectorContext&)> run;
  std::function<std::unique_ptr<DetectorPart>(const RankContext&)> collect;
  std::function<DetectorOutput(const DetectorPart&, const JobContext&)> finish;
  std::function<std::unique_ptr<DetectorPart>()> empty_part;  // the part of no rank
  bool split() const { return static_cast<bool>(collect); }
};

// A detector that reads the whole context at once.
inline Detector whole_detector(std::string name, Category category,
                               std::function<DetectorOutput(const DetectorContext&)> run) {
  Detector d;
  d.name = std::move(name);
  d.category = category;
  d.run = std::move(run);
  return d;
}

}  // namespace stepscope::diagnose
