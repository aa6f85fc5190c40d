// CLI golden tests: `stepscope analyze --json -` on every bundled example,
// compared with the reviewed outputs in tests/data/golden/. Only the report
// content is compared (timings and absolute paths are dropped). To accept an
// intended change, rerun with STEPSCOPE_UPDATE_GOLDEN=1 and review the diff.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_run.h"
#include "test_paths.h"

namespace stepscope::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Drops what legitimately changes between runs and machines.
json stable(json j) {
  j.erase("read_seconds");
  j.erase("analysis_seconds");
  j.erase("inputs");
  for (auto& r : j["ranks"]) r.erase("file");
  if (j.contains("diagnosis")) j["diagnosis"].erase("detectors");  // per-detector wall times
  return j;
}

// Structural equality where floating-point numbers may differ in their last
// bits: the golden files are written by one compiler (GCC, Release) and read
// back by every tree, and clang or sanitizer builds may contract a*b+c
// differently. Integers and everything else must match exactly. Returns the
// JSON pointer of the first difference, or "" when equal.
std::string first_difference(const json& want, const json& got, const std::string& where = "") {
  if (want.is_number_float() || got.is_number_float()) {
    if (!want.is_number() || !got.is_number()) return where;
    const double a = want.get<double>(), b = got.get<double>();
    const double tol = 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
    return std::abs(a - b) <= tol ? "" : where;
  }
  if (want.type() != got.type() || want.size() != got.size()) return where;
  if (want.is_object()) {
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!got.contains(it.key())) return where + "/" + it.key();
      std::string d = first_difference(it.value(), got[it.key()], where + "/" + it.key());
      if (!d.empty()) return d;
    }
    return "";
  }
  if (want.is_array()) {
    for (size_t i = 0; i < want.size(); ++i) {
      std::string d = first_difference(want[i], got[i], where + "/" + std::to_string(i));
      if (!d.empty()) return d;
    }
    return "";
  }
  return want == got ? "" : where;
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
  std::string out = testing::run_shell(cmd, rc);
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
  const std::string at = first_difference(want, got);
  if (!at.empty()) {
    const json::json_pointer ptr(at);
    ADD_FAILURE() << "output differs from " << golden << " at " << (at.empty() ? "/" : at) << ": want "
                  << (want.contains(ptr) ? want[ptr].dump() : "(absent)").substr(0, 1500) << ", got "
                  << (got.contains(ptr) ? got[ptr].dump() : "(absent)").substr(0, 1500);
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
