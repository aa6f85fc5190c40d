#include "diagnose/rank_parts.h"

#include <stdexcept>
#include <string>

#include "diagnose/detector_registry.h"
#include "diagnose/part_json.h"
#include "diagnose/rank_inputs.h"
#include "diagnose/replay_savings.h"

namespace stepscope::diagnose {

nlohmann::json collect_rank_parts(const trace::EventStore& store, const analysis::RankAnalysis& analysis,
                                  const DiagnoseOptions& options, size_t ranks_in_set) {
  const std::vector<Detector> detectors = default_detectors();
  std::vector<bool> enabled(detectors.size());
  for (size_t d = 0; d < detectors.size(); ++d)
    enabled[d] = std::find(options.disabled_detectors.begin(), options.disabled_detectors.end(),
                           detectors[d].name) == options.disabled_detectors.end();
  const RankInputs in = prepare_rank(store, options);
  const RankAttribution attribution = attribute_rank(in, store, analysis);
  const RankView view = view_of(in, attribution, store, analysis, options);
  std::vector<std::unique_ptr<DetectorPart>> parts = collect_rank(detectors, enabled, view, options, ranks_in_set);
  // Each remedy replayed on this rank, as analyze with replay_as_collected
  // does: which findings are reported is decided only when ranks merge.
  RankReplayState replay;
  if (options.replay) replay = replay_rank(in, store, analysis, options);
  const RankReplayInputs replay_in{store.rank, &replay.graph, &in.timeline, &replay.baseline, replay.faithful};
  nlohmann::json forms = nlohmann::json::object();
  for (size_t d = 0; d < detectors.size(); ++d) {
    if (!parts[d]) continue;
    if (FindingPart* f = parts[d]->finding_part(); f && options.replay && !f->remedies.empty())
      f->replay = replay_pick(replay_in, f->remedies);
    forms[detectors[d].name] = parts[d]->save();
  }
  return forms;
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
