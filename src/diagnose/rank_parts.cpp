#include "diagnose/rank_parts.h"

#include <iterator>
#include <stdexcept>
#include <string>

#include "diagnose/detector_registry.h"
#include "diagnose/example_place.h"
#include "diagnose/part_json.h"
#include "diagnose/rank_inputs.h"
#include "diagnose/replay_savings.h"

namespace stepscope::diagnose {

namespace {

// An example's JSON form (part_json.h): an object of exactly its fields.
bool is_example_form(const nlohmann::json& j) {
  static const char* const kKeys[] = {"rank", "step", "ts_ns", "dur_ns", "name", "detail", "step_offset_ns", "source", "timed"};
  if (!j.is_object() || j.size() != std::size(kKeys)) return false;
  for (const char* k : kKeys)
    if (!j.contains(k)) return false;
  return true;
}

// Every example of the rank in the parts' forms, wherever a detector keeps
// it (pools, a table's first occurrence, a device's peak), placed.
void place_forms(nlohmann::json& j, ExamplePlacer& placer, int64_t rank) {
  if (is_example_form(j)) {
    Example e = j.get<Example>();
    if (e.rank != rank) return;
    placer.place(e);
    j = e;
    return;
  }
  if (j.is_object() || j.is_array())
    for (nlohmann::json& child : j) place_forms(child, placer, rank);
}

}  // namespace

CollectedRank collect_rank_parts(const trace::EventStore& store, const analysis::RankAnalysis& analysis,
                                 const DiagnoseOptions& options, size_t ranks_in_set) {
  const std::vector<Detector> detectors = default_detectors();
  const std::vector<bool> enabled = enabled_detectors(detectors, options.disabled_detectors);
  const RankInputs in = prepare_rank(store, options);
  CollectedRank out;
  RankDiagnosis& report = out.report;
  report.attribution = attribute_rank(in, store, analysis);
  const RankAttribution& attribution = report.attribution;
  const RankView view = view_of(in, attribution, store, analysis, options);
  report.hardware = view.peaks ? std::string(view.peaks->model) : std::string();
  std::vector<std::unique_ptr<DetectorPart>> parts = collect_rank(detectors, enabled, view, options, ranks_in_set);
  // Each remedy replayed on this rank, as analyze with replay_as_collected
  // does: which findings are reported is decided only when ranks merge.
  RankReplayState replay;
  if (options.replay) replay = replay_rank(in, store, analysis, options);
  report_replay(store, in, options.replay ? &replay : nullptr, report.replay, report.critical_path);
  const RankReplayInputs replay_in{store.rank, &replay.graph, &in.timeline, &replay.baseline, replay.faithful};
  out.parts = nlohmann::json::object();
  for (size_t d = 0; d < detectors.size(); ++d) {
    if (!parts[d]) continue;
    if (FindingPart* f = parts[d]->finding_part(); f && options.replay && !f->remedies.empty())
      f->replay = replay_pick(replay_in, f->remedies);
    out.parts[detectors[d].name] = parts[d]->save();
  }
  ExamplePlacer placer(store, *in.tree, analysis.steps);
  place_forms(out.parts, placer, store.rank);
  // The attribution's spans are what the detectors read, the critical
  // path's draw it on the timeline (which needs the events): neither is
  // in a report merged from summaries.
  std::vector<BucketSpan>().swap(report.attribution.spans);
  for (whatif::StepCriticalPath& s : report.critical_path.steps) std::vector<whatif::PathSpan>().swap(s.spans);
  return out;
}

std::vector<std::unique_ptr<DetectorPart>> load_rank_parts(const nlohmann::json& forms,
                                                           const std::vector<Detector>& detectors, int64_t rank) {
  if (!forms.is_object()) throw std::runtime_error("diagnosis parts: not an object");
  for (const auto& [name, form] : forms.items()) {
    bool known = false;
    for (const Detector& d : detectors) known = known || d.name == name;
    if (!known) throw std::runtime_error("diagnosis part of an unknown detector '" + name + "'");
  }
  std::vector<std::unique_ptr<DetectorPart>> parts(detectors.size());
  for (size_t d = 0; d < detectors.size(); ++d) {
    const auto it = forms.find(detectors[d].name);
    if (it == forms.end()) continue;
    try {
      parts[d] = detectors[d].load(*it);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error("diagnosis part of " + detectors[d].name + ": " + json_error_text(e));
    }
    parts[d]->set_rank(rank);
  }
  return parts;
}

}  // namespace stepscope::diagnose
