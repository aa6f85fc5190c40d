#include "pipeline/merge_diagnosis.h"

#include <fmt/core.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "diagnose/detector_registry.h"
#include "diagnose/example_place.h"
#include "diagnose/part_json.h"
#include "diagnose/rank_parts.h"
#include "summary/summary_json.h"

namespace stepscope::pipeline {

namespace {

using diagnose::NotAssessed;

// The diagnosis options the parts were collected with (summary_json.h:
// diagnosis_settings); the reporting bars are analyze's defaults.
diagnose::DiagnoseOptions options_of(const summary::SummarySettings& settings) {
  diagnose::DiagnoseOptions o;
  o.analysis = settings.analysis;
  try {
    settings.diagnosis.at("disabled_detectors").get_to(o.disabled_detectors);
    settings.diagnosis.at("replay").get_to(o.replay);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("bad summary body: settings.diagnosis: " + diagnose::json_error_text(e));
  }
  return o;
}

// The parts of one summary, each enabled detector's and no other.
std::vector<std::unique_ptr<diagnose::DetectorPart>> parts_of(const summary::RankSummary& s,
                                                              const std::vector<diagnose::Detector>& detectors,
                                                              const std::vector<bool>& enabled, int64_t rank) {
  std::vector<std::unique_ptr<diagnose::DetectorPart>> parts =
      diagnose::load_rank_parts(summary::diagnosis_parts(s), detectors, rank);
  for (size_t d = 0; d < detectors.size(); ++d) {
    if (enabled[d] && !parts[d]) throw std::runtime_error("no diagnosis part of " + detectors[d].name);
    if (!enabled[d] && parts[d])
      throw std::runtime_error("a diagnosis part of " + detectors[d].name + ", which its settings disable");
  }
  return parts;
}

// What needs every rank's replay graph at once, said where the report would show it.
void say_what_is_left_out(diagnose::Diagnosis& d, size_t ranks, const diagnose::DiagnoseOptions& o) {
  if (!o.replay) return;
  const std::string why = std::string(kNotFromSummaries) + ": ";
  d.not_assessed.push_back({"replay", "combined saving of the reported findings",
                            why + "their remedies replayed together need each rank's step graph, which stays with "
                                  "its trace (stepscope analyze gives it)"});
  for (const diagnose::Finding& f : d.findings) {
    if (f.category != diagnose::Category::kLoadImbalance || !f.saves_time) continue;
    d.not_assessed.push_back({"load_imbalance", "replay saving",
                              why + "the remedy depends on every rank's steps and is replayed on the slowest rank's "
                                    "step graph; the saving shown is the detector's bound (stepscope analyze "
                                    "replays it)"});
  }
  if (ranks >= 2) {
    const std::string note = why + "the job replay ties every rank's step graph at its collectives (stepscope "
                                   "analyze gives it)";
    d.job_replay.notes.push_back(note);
    d.job_critical_path.notes.push_back(note);
    d.not_assessed.push_back({"replay", "job replay and job critical path", note});
  }
}

// A rank whose trace records no world size had its communication part
// collected for the set size its summary was told (--ranks-in-set; unknown:
// alone), where analyze takes the number of ranks it read: where those
// differ and the rank ran collectives, its part is not analyze's.
void note_set_size(diagnose::Diagnosis& d, const std::vector<NamedSummary*>& ranks,
                   const std::vector<analysis::RankAnalysis>& analyses, size_t n) {
  std::vector<int64_t> differ;
  uint64_t told = 0;
  for (size_t i = 0; i < n; ++i) {
    const analysis::RankAnalysis& a = analyses[i];
    const uint64_t k = std::max<uint64_t>(ranks[i]->summary.ranks_in_set, 1);
    if (a.origin.world_size || k == n) continue;
    bool collectives = false;
    for (const analysis::ClassKernels& c : a.kernels.classes)
      collectives = collectives || (c.cls == analysis::KernelClass::kCommunication && c.duration.count > 0);
    if (!collectives) continue;
    if (differ.empty()) told = ranks[i]->summary.ranks_in_set;
    differ.push_back(a.rank);
  }
  if (differ.empty()) return;
  d.not_assessed.push_back(
      {"communication", fmt::format("{} rank{} (first {}): collectives' bus bandwidth and savings", differ.size(),
                                    differ.size() == 1 ? "" : "s", differ.front()),
       fmt::format("{}: their traces record no world size, and their summaries were made {} where this set has {} "
                   "ranks (summarize with --ranks-in-set {} to get analyze's)",
                   kNotFromSummaries,
                   told == 0 ? std::string("without --ranks-in-set (each rank taken as alone)")
                             : fmt::format("for a set of {} ranks", told),
                   n, n)});
}

}  // namespace

MergedDiagnosis merge_diagnosis(const std::vector<NamedSummary*>& ranks,
                                const std::vector<analysis::RankAnalysis>& analyses,
                                const analysis::MultiRankAnalysis& multi, const summary::SummarySettings& settings) {
  MergedDiagnosis out;
  diagnose::Diagnosis& d = out.diagnosis;
  const size_t n = std::min(ranks.size(), analyses.size());
  size_t at = 0;  // the summary being read, for an error
  try {
    const diagnose::DiagnoseOptions o = options_of(settings);
    std::vector<const analysis::RankAnalysis*> rank_analyses;
    std::vector<bool> has_peaks;
    for (size_t i = 0; i < n; ++i) {
      diagnose::RankDiagnosis& rd = ranks[i]->summary.rank_diagnosis;
      const int64_t rank = analyses[i].rank;
      rd.attribution.rank = rd.replay.rank = rd.critical_path.rank = rank;
      rd.replay.combined_saving_ns = -1;
      d.attribution.push_back(std::move(rd.attribution));
      d.replay.push_back(std::move(rd.replay));
      d.critical_path.push_back(std::move(rd.critical_path));
      has_peaks.push_back(!rd.hardware.empty());
      d.hardware.push_back(std::move(rd.hardware));
      rank_analyses.push_back(&analyses[i]);
    }
    diagnose::add_trace_notes(d, rank_analyses, has_peaks);

    // Parts merged in rank order, as analyze merges them; each summary's
    // encoded parts are let go once loaded.
    const std::vector<diagnose::Detector> detectors = diagnose::default_detectors();
    const std::vector<bool> enabled = diagnose::enabled_detectors(detectors, o.disabled_detectors);
    std::vector<std::unique_ptr<diagnose::DetectorPart>> merged(detectors.size());
    for (at = 0; at < n; ++at) {
      summary::RankSummary& s = ranks[at]->summary;
      diagnose::merge_parts(merged, parts_of(s, detectors, enabled, analyses[at].rank));
      std::vector<uint8_t>().swap(s.diagnosis);
    }
    at = n;
    std::vector<const diagnose::RankAttribution*> attributions;
    for (const diagnose::RankAttribution& a : d.attribution) attributions.push_back(&a);
    diagnose::RegistryResult run =
        diagnose::finish_detectors(detectors, enabled, merged, {}, {&multi, &o, n}, attributions);
    diagnose::rank_findings(d, std::move(run), {}, o);
    // The examples' sources were found at summarize time; the step offsets
    // of those a detector makes when finishing (from every rank's steps) here.
    for (size_t i = 0; i < n; ++i) {
      diagnose::place_examples_in_steps(d.findings, analyses[i].rank, analyses[i].steps);
      diagnose::place_examples_in_steps(d.minor, analyses[i].rank, analyses[i].steps);
    }
    diagnose::add_ranking_note(d, o);
    say_what_is_left_out(d, n, o);
    note_set_size(d, ranks, analyses, n);
  } catch (const std::exception& e) {  // a summary's data the detectors' code refused
    out.error_file = at < n ? ranks[at]->name : (ranks.empty() ? std::string() : ranks.front()->name);
    out.error = fmt::format("{}: {}", out.error_file, e.what());
  }
  return out;
}

}  // namespace stepscope::pipeline
