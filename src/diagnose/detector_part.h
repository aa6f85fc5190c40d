// A detector in two halves, so that a diagnosis can be made one rank at a
// time and merged (issue #32): `collect` reads one rank and returns what the
// finding needs of it (its part: sums, its largest saving, its best
// examples); parts of many ranks merge into one; `finish` turns the merged
// part into the finding. `stepscope analyze` runs the same three steps over
// the ranks it holds, so a merge of per-rank parts gives what analyze gives.
//
//   auto parts = collect_rank(detectors, enabled, view, options, ranks);  // per rank
//   (detector_registry.h: each detector sees what the earlier ones claimed)
//   part->merge_from(*later_rank_part);    // left to right, rank order
//   DetectorOutput out = detector.finish(*part, job);
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diagnose/detector.h"
#include "diagnose/interval_set.h"

namespace stepscope::diagnose {

// What a detector's collect may read: one rank, and the host idle that the
// detectors before it (registry order) claimed on that rank.
struct RankContext {
  const RankView* view = nullptr;
  IntervalSet claimed;
  const DiagnoseOptions* options = nullptr;
  // Host time on this rank that earlier detectors' remedies remove or whose
  // idle they claim (a remedy that scales all host time leaves it alone:
  // those findings price it themselves).
  std::vector<std::pair<int64_t, int64_t>> priced_host;
  // Ranks in the set, for a trace that does not record its world size.
  size_t ranks_in_set = 1;
};

// What a detector's finish may read besides its merged part.
struct JobContext {
  const analysis::MultiRankAnalysis* multi = nullptr;
  const DiagnoseOptions* options = nullptr;
  size_t ranks = 0;
};

// The saving of a cause on one rank: the mean over steps of the per-step
// time it explains (each step capped at its wall time), against the mean of
// the same steps. A finding's saving is that of the rank where it is
// largest: merging keeps it, the earlier rank of equals.
struct RankSaving {
  bool valid = false;  // false: the rank has no steps
  int64_t rank = -1;
  double us = 0;       // µs per step
  double step_us = 0;  // the mean step the share is of, µs

  // `per_step` by attribution step; the first `skip_first` steps left out
  // when later steps exist.
  static RankSaving of(const RankView& r, const std::vector<int64_t>& per_step, size_t skip_first = 0);
  // The same from the rank's step walls and mean step (ns) alone.
  static RankSaving of_steps(int64_t rank, const std::vector<int64_t>& walls, int64_t mean_step_ns,
                             const std::vector<int64_t>& per_step, size_t skip_first = 0);
  void merge(const RankSaving& later_rank);
  // Sets the finding's estimated saving, share, rank and severity (0 when
  // no rank had steps).
  void apply_to(Finding& f) const;
};

// The examples of a finding, best first, kept to kMaxExamples: a stable
// sort by weight over all ranks' candidates in rank order, computed a rank
// at a time.
class ExamplePool {
 public:
  void add(double weight, Example example) { candidates_.push_back({weight, std::move(example)}); }
  // Keeps the best kMaxExamples of this rank (call once collect is done).
  void trim();
  void merge(const ExamplePool& later_rank);
  std::vector<Example> best() const;
  size_t size() const { return candidates_.size(); }
  void set_rank(int64_t rank);

 private:
  friend void to_json(nlohmann::json& j, const ExamplePool& p);
  friend void from_json(const nlohmann::json& j, ExamplePool& p);
  struct Weighted {
    double weight;
    Example example;
  };
  std::vector<Weighted> candidates_;
};

// What every time-saving finding's part holds: the saving's rank, the
// examples, the host idle it claims and its remedy on each rank (the last
// two in memory only: later detectors and the replay read them).
struct FindingPart {
  RankSaving saving;
  ExamplePool examples;
  std::vector<IdleClaim> claims;
  std::vector<RankRemedy> remedies;
  // Its remedy replayed on the rank (set by the registry where the rank's
  // replay is faithful): merged, the largest, the earlier rank of equals.
  Finding::ReplayPick replay;

  void merge_common(const FindingPart& later_rank);
  // Saving, severity, claims, remedies and examples of the finding.
  void fill(Finding& f) const;
  // The rank it is of, renumbered (a single rank's part).
  void set_rank(int64_t rank);
};

// Adds counts by name (a later rank's into the merged ones), saturating.
void add_counts(std::map<std::string, int64_t>& to, const std::map<std::string, int64_t>& from);

// A detector's per-rank result, of the detector's own type behind it.
class DetectorPart {
 public:
  virtual ~DetectorPart() = default;
  // Adds a later rank's part (the same detector's).
  virtual void merge_from(const DetectorPart& later_rank) = 0;
  // Its claims, remedies and replay, for a part that has them.
  virtual const FindingPart* finding_part() const { return nullptr; }
  FindingPart* finding_part() { return const_cast<FindingPart*>(std::as_const(*this).finding_part()); }
  // Its JSON form (part_json.h; claims and remedies, which only the rank's
  // own trace can use, are left out).
  virtual nlohmann::json save() const = 0;
  // Renumbers a single rank's part (the merge numbers ranks anew).
  virtual void set_rank(int64_t rank) = 0;
};

// The part type P of a detector behind DetectorPart. P has
// `void merge(const P& later_rank)`.
template <class P>
class TypedPart final : public DetectorPart {
 public:
  explicit TypedPart(P p) : part(std::move(p)) {}
  void merge_from(const DetectorPart& later_rank) override {
    part.merge(static_cast<const TypedPart<P>&>(later_rank).part);
  }
  const FindingPart* finding_part() const override {
    if constexpr (std::is_base_of_v<FindingPart, P>)
      return &part;
    else
      return nullptr;
  }
  // Defined in part_json.h, where JSON is complete.
  nlohmann::json save() const override;
  void set_rank(int64_t rank) override { part.set_rank(rank); }
  P part;
};

}  // namespace stepscope::diagnose
