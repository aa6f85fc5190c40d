// CLI golden tests: `stepscope analyze --json -` on every bundled example,
// compared with the reviewed outputs in tests/data/golden/. Only the report
// content is compared (timings and absolute paths are dropped). To accept an
// intended change, rerun with STEPSCOPE_UPDATE_GOLDEN=1 and review the diff.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_paths.h"

namespace stepscope::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string run_capture(const std::string& cmd, int& exit_code) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return out;
}

// Drops what legitimately changes between runs and machines.
json stable(json j) {
  j.erase("read_seconds");
  j.erase("analysis_seconds");
  j.erase("inputs");
  for (auto& r : j["ranks"]) r.erase("file");
  if (j.contains("diagnosis")) j["diagnosis"].erase("detectors");  // per-detector wall times
  return j;
}

std::vector<std::string> examples() {
  std::vector<std::string> names;
  fs::path dir = fs::path(testing::source_dir()) / "examples";
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (fs::exists(e.path() / "rank0.json.gz")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

class GoldenExample : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(GoldenExample, JsonMatchesReviewedOutput) {
  const auto& [name, mode] = GetParam();
  std::string trace = testing::source_dir() + "/examples/" + name + "/rank0.json.gz";
  std::string cmd = testing::cli_path() + " analyze --json - " + (mode == "hta" ? "--compat hta " : "") + trace;
  int rc = -1;
  std::string out = run_capture(cmd, rc);
  ASSERT_EQ(rc, 0) << cmd;
  json got = stable(json::parse(out));
  ASSERT_EQ(got["ranks"].size(), 1u);
  // The required schema fields are present with the right types.
  const json& r = got["ranks"][0];
  for (const char* f : {"rank", "steps", "temporal_breakdown", "comm_comp_overlap_pct", "idle_breakdown",
                        "kernel_types", "top_kernels"})
    EXPECT_TRUE(r.contains(f)) << f;
  EXPECT_TRUE(r["temporal_breakdown"].contains("idle_us"));
  EXPECT_GT(r["temporal_breakdown"]["kernel_time_us"].get<double>(), 0);

  fs::path golden = fs::path(testing::test_data_dir()) / "golden" / (name + "." + mode + ".json");
  if (std::getenv("STEPSCOPE_UPDATE_GOLDEN")) {
    std::ofstream(golden) << got.dump(1) << "\n";
    GTEST_SKIP() << "golden file rewritten: " << golden;
  }
  std::ifstream in(golden);
  ASSERT_TRUE(in) << "missing golden file " << golden << " (run with STEPSCOPE_UPDATE_GOLDEN=1)";
  json want = json::parse(in);
  if (got != want) {
    json patch = json::diff(want, got);
    ADD_FAILURE() << "output differs from " << golden << "; first differences:\n"
                  << patch.dump(1).substr(0, 3000);
  }
}

std::vector<std::tuple<std::string, std::string>> cases() {
  std::vector<std::tuple<std::string, std::string>> c;
  for (const auto& e : examples())
    for (const char* m : {"exact", "hta"}) c.emplace_back(e, m);
  return c;
}

INSTANTIATE_TEST_SUITE_P(Examples, GoldenExample, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

TEST(GoldenExamples, EveryExampleIsCovered) { EXPECT_GE(examples().size(), 1u) << "examples/ holds no trace"; }

}  // namespace
}  // namespace stepscope::cli
