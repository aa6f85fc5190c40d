// Loads the bundled example runs (examples/<name>/) once per test binary,
// through the same pipeline `stepscope diff` uses, and diffs pairs of them.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "diff/run_diff.h"
#include "pipeline/analyze_run.h"
#include "pipeline/diff_input.h"
#include "test_paths.h"

namespace stepscope::diff::testing_support {

// `input` is anything `stepscope diff` takes for one side (file, folder, glob).
inline const pipeline::AnalyzedRun& loaded_run(const std::string& input) {
  static std::map<std::string, std::unique_ptr<pipeline::AnalyzedRun>> cache;
  auto& slot = cache[input];
  if (!slot) {
    pipeline::RunOptions o;
    o.threads = 1;
    slot = std::make_unique<pipeline::AnalyzedRun>(pipeline::analyze_run({input}, o));
  }
  return *slot;
}

inline const pipeline::AnalyzedRun& example_run(const std::string& name) {
  return loaded_run(::stepscope::testing::source_dir() + "/examples/" + name);
}

inline RunInput input_of(const pipeline::AnalyzedRun& r) { return pipeline::run_input_of(r); }

inline DiffResult diff_examples(const std::string& before, const std::string& after, DiffOptions options = {}) {
  const auto& b = example_run(before);
  const auto& a = example_run(after);
  EXPECT_TRUE(b.ok) << before << ": " << b.error;
  EXPECT_TRUE(a.ok) << after << ": " << a.error;
  return diff_runs(input_of(b), input_of(a), analysis::AnalysisOptions{}, options);
}

inline const FindingDelta* find_delta(const DiffResult& d, diagnose::Category c) {
  for (const auto& f : d.findings)
    if (f.category == c) return &f;
  return nullptr;
}

}  // namespace stepscope::diff::testing_support
