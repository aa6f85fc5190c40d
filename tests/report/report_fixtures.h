// Helpers for report tests: a real trace run through the whole pipeline
// (read, analyse, diagnose) into the AnalyzeReport the renderers take, and a
// scratch folder under the test's working directory (the build tree).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/load_run.h"
#include "report/analyze_report.h"
#include "test_paths.h"

namespace stepscope::report::testing_support {

struct Reported {
  pipeline::LoadedRun run;  // owns the stores the report points into
  AnalyzeReport report;
};

inline std::unique_ptr<Reported> report_of(const std::vector<std::string>& inputs) {
  auto out = std::make_unique<Reported>();
  out->run = pipeline::load_run(inputs, pipeline::RunOptions{});
  EXPECT_TRUE(out->run.ok) << out->run.error;
  AnalyzeReport& r = out->report;
  r.inputs = inputs;
  r.notes = out->run.set.notes;
  r.warnings = out->run.set.warnings;
  r.uncompressed_bytes = out->run.set.uncompressed_bytes;
  r.stores = out->run.stores;
  r.ranks = out->run.ranks;
  r.multi = out->run.multi;
  r.diagnosis = out->run.diagnosis;
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
