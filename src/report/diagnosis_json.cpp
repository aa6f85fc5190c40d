#include "report/diagnosis_json.h"

namespace stepscope::report {

using nlohmann::ordered_json;
namespace dg = diagnose;

namespace {

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

}  // namespace

ordered_json finding_json(const dg::Finding& f) {
  ordered_json metrics = ordered_json::array();
  for (const auto& m : f.evidence.metrics) metrics.push_back({{"name", m.name}, {"value", m.value}, {"unit", m.unit}});
  ordered_json examples = ordered_json::array();
  for (const auto& e : f.evidence.examples)
    examples.push_back({{"rank", e.rank},
                        {"step", e.step >= 0 ? ordered_json(e.step) : ordered_json(nullptr)},
                        {"ts_us", e.timed ? ordered_json(us(e.ts_ns)) : ordered_json(nullptr)},
                        {"dur_us", us(e.dur_ns)},
                        {"name", e.name},
                        {"detail", e.detail},
                        {"step_offset_us", e.step_offset_ns >= 0 ? ordered_json(us(e.step_offset_ns)) : ordered_json(nullptr)},
                        {"source", e.source.empty() ? ordered_json(nullptr) : ordered_json(e.source)}});
  return {{"category", std::string(dg::to_string(f.category))},
          {"detector", f.detector},
          {"title", f.title},
          {"severity", std::string(dg::to_string(f.severity))},
          {"confidence", std::string(dg::to_string(f.confidence))},
          {"estimated_saving_us", f.estimated_saving_us},
          {"estimated_saving_pct", f.estimated_saving_pct},
          {"saving_rank", f.saving_rank},
          {"saving_basis", f.saves_time ? ordered_json(std::string(dg::to_string(f.saving_basis))) : ordered_json(nullptr)},
          {"bound_saving_us", f.saves_time ? ordered_json(f.bound_saving_us) : ordered_json(nullptr)},
          {"bound_saving_pct", f.saves_time ? ordered_json(f.bound_saving_pct) : ordered_json(nullptr)},
          {"bound_rank", f.bound_rank},
          {"saves_time", f.saves_time},
          {"evidence", {{"metrics", metrics}, {"examples", examples}}},
          {"remedy", f.remedy}};
}

namespace {

void emit_buckets(JsonEmit& e, const dg::StepAttribution& s) {
  e.begin_object();
  for (int i = 0; i < dg::kBucketCount; ++i) {
    auto bucket = static_cast<dg::Bucket>(i);
    e.key(dg::to_string(bucket));
    e.begin_object();
    e.member("us", us(s.of(bucket)));
    e.member("pct", s.pct(bucket));
    e.end();
  }
  e.end();
}

}  // namespace

void emit_attribution(JsonEmit& e, const dg::RankAttribution& a) {
  e.begin_object();
  e.member("from_profiler_steps", a.from_profiler_steps);
  e.member("gpu_activity", a.gpu_activity);
  e.member("mean_step_us", us(a.mean_step_ns()));
  e.key("total");
  e.begin_object();
  e.member("wall_us", us(a.total.wall_ns()));
  e.key("buckets");
  emit_buckets(e, a.total);
  e.end();
  e.key("steps");
  e.begin_array();
  for (const auto& s : a.steps) {
    e.begin_object();
    e.member("step", s.step);
    e.member("start_us", us(s.start_ns));
    e.member("wall_us", us(s.wall_ns()));
    const double wall = static_cast<double>(s.wall_ns());
    e.member("effective_compute_pct", wall > 0 ? 100.0 * static_cast<double>(s.effective_compute_ns()) / wall : 0.0);
    e.key("buckets");
    emit_buckets(e, s);
    e.end();
  }
  e.end();
  e.end();
}

ordered_json attribution_json(const dg::RankAttribution& a) {
  TreeEmit t;
  emit_attribution(t, a);
  return t.take();
}

ordered_json diagnosis_json(const dg::Diagnosis& d) {
  ordered_json findings = ordered_json::array();
  for (const auto& f : d.findings) findings.push_back(finding_json(f));
  ordered_json minor = ordered_json::array();
  for (const auto& f : d.minor) minor.push_back(finding_json(f));
  ordered_json na = ordered_json::array();
  for (const auto& n : d.not_assessed) na.push_back({{"detector", n.detector}, {"what", n.what}, {"reason", n.reason}});
  ordered_json det = ordered_json::array();
  for (const auto& r : d.detectors)
    det.push_back({{"name", r.name}, {"category", std::string(dg::to_string(r.category))}, {"enabled", r.enabled},
                   {"seconds", r.seconds}, {"findings", r.findings}, {"rejected", r.rejected}});
  ordered_json what_if = nullptr;
  if (d.what_if)
    what_if = {{"categories", d.what_if->categories},
               {"not_found", d.what_if->not_found},
               {"saving_us", d.what_if->rank >= 0 ? ordered_json(d.what_if->saving_us) : ordered_json(nullptr)},
               {"saving_pct", d.what_if->rank >= 0 ? ordered_json(d.what_if->saving_pct) : ordered_json(nullptr)},
               {"saving_rank", d.what_if->rank}};
  return {{"primary_bottleneck", d.primary_bottleneck},
          {"effective_compute_pct", d.effective_compute_pct},
          {"combined_saving_us", d.combined_saving_us},
          {"combined_saving_pct", d.combined_saving_pct},
          {"combined_saving_rank", d.combined_saving_rank},
          {"what_if", what_if},
          {"findings", findings},
          {"minor_findings", minor},
          {"not_assessed", na},
          {"hardware", d.hardware},
          {"detectors", det},
          {"validation_errors", d.validation_errors}};
}

}  // namespace stepscope::report
