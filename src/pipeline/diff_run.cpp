#include "pipeline/diff_run.h"

#include <fmt/core.h>

#include "pipeline/allocator_policy.h"
#include "pipeline/diff_input.h"

namespace stepscope::pipeline {

namespace {

bool load_side(const char* side, const std::vector<std::string>& inputs, const RunOptions& options,
               AnalyzedRun& run, DiffedRuns& out) {
  run = analyze_run(inputs, options);
  if (!run.ok) {
    out.error = fmt::format("{}: {}", side, run.error);
    out.error_file = run.error_file;
    out.error_byte = run.error_byte;
    out.bad_option = run.bad_option;
    return false;
  }
  for (const auto& w : warnings_to_show(run)) out.report.warnings.push_back(fmt::format("{}: {}", side, w));
  return true;
}

}  // namespace

DiffedRuns diff_run(const std::vector<std::string>& before, const std::vector<std::string>& after, RunOptions run,
                    const diff::DiffOptions& options, const std::vector<std::string>& fail_if) {
  DiffedRuns out;
  // The conditions first: a typo fails before minutes of reading.
  std::vector<diff::GateCondition> conditions;
  for (const std::string& text : fail_if) {
    std::string error;
    std::optional<diff::GateCondition> c = diff::parse_gate_condition(text, error);
    if (!c) {
      out.error = "--fail-if " + error;
      out.bad_option = true;
      return out;
    }
    conditions.push_back(std::move(*c));
  }
  out.report.before_inputs = before;
  out.report.after_inputs = after;
  out.report.options = options;
  // Both runs stay loaded for the comparison, read on the same threads.
  if (run.tune_allocator) {
    std::vector<std::string> all = before;
    all.insert(all.end(), after.begin(), after.end());
    choose_allocator_policy(all, run.threads);
    run.tune_allocator = false;
  }
  if (!load_side("before", before, run, out.before, out) || !load_side("after", after, run, out.after, out)) return out;
  out.report.result = diff::diff_runs(run_input_of(out.before), run_input_of(out.after), run.analysis, options);
  if (!conditions.empty()) {
    out.report.gate_conditions = fail_if;
    out.report.gate = diff::evaluate_gate(out.report.result, conditions);
  }
  out.ok = true;
  return out;
}

}  // namespace stepscope::pipeline
