#include "report/diff_json.h"

#include "report/analyze_report.h"

namespace stepscope::report {

using nlohmann::ordered_json;

namespace {

// {before, after, change, change_pct}; change_pct is null when before is 0.
ordered_json change_json(const diff::Change& c, bool with_pct = true) {
  ordered_json j = {{"before", c.before}, {"after", c.after}, {"change", c.change}};
  if (with_pct) j["change_pct"] = c.before != 0 ? ordered_json(c.change_pct) : ordered_json(nullptr);
  return j;
}

ordered_json run_json(const std::vector<std::string>& inputs, const diff::RunInfo& r) {
  return {{"inputs", inputs},
          {"ranks", r.ranks},
          {"steps", r.windows},
          {"from_profiler_steps", r.from_profiler_steps},
          {"device", r.device.empty() ? ordered_json(nullptr) : ordered_json(r.device)}};
}

ordered_json side_json(const diff::FindingSide& s) {
  if (!s.present) return nullptr;
  return {{"reported", s.reported},
          {"title", s.title},
          {"severity", std::string(diagnose::to_string(s.severity))},
          {"saves_time", s.saves_time},
          {"estimated_saving_us", s.saving_us},
          {"estimated_saving_pct", s.saving_pct}};
}

ordered_json kernel_side_json(const diff::KernelSide& s, bool present) {
  if (!present) return nullptr;
  return {{"count_per_step", s.count_per_step}, {"us_per_step", s.us_per_step}, {"mean_us", s.mean_us}};
}

ordered_json kernels_json(const diff::KernelDiff& k) {
  ordered_json lists = ordered_json::object();
  for (const auto& l : k.lists) {
    ordered_json top = ordered_json::array();
    for (const auto& d : l.top) {
      bool b = d.change != diff::KernelChange::kAdded;
      bool a = d.change != diff::KernelChange::kRemoved;
      top.push_back({{"name", d.name},
                     {"type", std::string(analysis::to_string(d.cls))},
                     {"family", std::string(analysis::to_string(d.family))},
                     {"before", kernel_side_json(d.before, b)},
                     {"after", kernel_side_json(d.after, a)},
                     {"us_per_step_change", d.us_per_step_change},
                     {"mean_change_pct", a && b ? ordered_json(d.mean_change_pct) : ordered_json(nullptr)}});
    }
    lists[std::string(diff::to_string(l.change))] = {
        {"kernels", l.kernels}, {"us_per_step_change", l.us_per_step_change}, {"top", top}};
  }
  return {{"count_per_step", change_json(k.count_per_step)},
          {"us_per_step", change_json(k.us_per_step)},
          {"unchanged", k.unchanged},
          {"changes", lists}};
}

}  // namespace

ordered_json build_diff_json(const DiffReport& r) {
  const diff::DiffResult& d = r.result;
  ordered_json j;
  j["schema"] = "stepscope.diff";
  j["schema_version"] = kDiffJsonSchemaVersion;
  j["tool_version"] = kToolVersion;
  j["before"] = run_json(r.before_inputs, d.before);
  j["after"] = run_json(r.after_inputs, d.after);
  j["warnings"] = r.warnings;
  j["notes"] = d.notes;
  j["thresholds"] = {{"kernel_mean_change_pct", r.options.kernel_mean_change_pct},
                     {"kernel_mean_change_us", r.options.kernel_mean_change_us},
                     {"kernel_count_change_pct", r.options.kernel_count_change_pct},
                     {"top_kernels", r.options.top_kernels}};
  j["step_us"] = change_json(d.step_us);
  ordered_json buckets = ordered_json::array();
  for (const auto& b : d.buckets)
    buckets.push_back({{"bucket", std::string(diagnose::to_string(b.bucket))},
                       {"us_per_step", change_json(b.us_per_step)},
                       {"share_pct", change_json(b.share_pct, false)}});
  j["attribution"] = buckets;
  j["busy_pct"] = change_json(d.busy_pct, false);
  j["compute_pct"] = change_json(d.compute_pct, false);
  j["effective_compute_pct"] = change_json(d.effective_compute_pct, false);
  j["primary_bottleneck"] = {{"before", d.primary_before}, {"after", d.primary_after}};
  ordered_json findings = ordered_json::array();
  for (const auto& f : d.findings)
    findings.push_back({{"change", std::string(diff::to_string(f.change))},
                        {"category", std::string(diagnose::to_string(f.category))},
                        {"detector", f.detector},
                        {"before", side_json(f.before)},
                        {"after", side_json(f.after)},
                        {"saving_change_us", f.saving_change_us}});
  j["findings"] = {{"resolved", d.count(diff::FindingChange::kResolved)},
                   {"new", d.count(diff::FindingChange::kNew)},
                   {"persisting", d.count(diff::FindingChange::kPersisting)},
                   {"items", findings}};
  j["kernels"] = kernels_json(d.kernels);
  if (r.gate)
    j["gate"] = {{"conditions", r.gate_conditions}, {"failed", r.gate->failed}, {"crossed", r.gate->crossed},
                 {"verdict", r.gate->line}};
  else
    j["gate"] = nullptr;
  return j;
}

}  // namespace stepscope::report
