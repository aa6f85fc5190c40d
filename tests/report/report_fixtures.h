// Helpers for report tests: a real trace run through the whole pipeline
// (read, analyse, diagnose) into the AnalyzeReport the renderers take, and a
// scratch folder under the test's working directory (the build tree).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/analyze_run.h"
#include "report/analyze_report.h"
#include "test_paths.h"

namespace stepscope::report::testing_support {

struct Reported {
  pipeline::AnalyzedRun run;  // owns the stores the report points into
  AnalyzeReport report;       // a copy of run.report that a test may change
};

inline std::unique_ptr<Reported> report_of(const std::vector<std::string>& inputs) {
  auto out = std::make_unique<Reported>();
  out->run = pipeline::analyze_run(inputs, pipeline::RunOptions{});
  EXPECT_TRUE(out->run.ok) << out->run.error;
  out->report = out->run.report;
  return out;
}

inline std::string example_trace(const std::string& name) {
  return stepscope::testing::source_dir() + "/examples/" + name + "/rank0.json.gz";
}

// A folder for this test's output, emptied first; under the build tree
// (ctest runs tests there), so outputs can be looked at after a run. The
// folder is named after the running test as well: ctest -j runs the tests of
// one fixture in parallel processes, and a shared folder would be emptied by
// one test while another is writing into it.
inline std::filesystem::path scratch_dir(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string leaf = name;
  if (info != nullptr) leaf += std::string("__") + info->test_suite_name() + "." + info->name();
  for (char& c : leaf)
    if (c == '/') c = '_';  // parameterised test names contain '/'
  std::filesystem::path p = std::filesystem::current_path() / "report_out" / leaf;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

}  // namespace stepscope::report::testing_support
