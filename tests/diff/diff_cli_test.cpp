// `stepscope diff` end to end: the JSON schema on a real pair, the terminal
// report's sections, and errors for unreadable inputs.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "test_paths.h"

namespace stepscope::diff {
namespace {

using nlohmann::json;

std::string example(const std::string& name) { return testing::source_dir() + "/examples/" + name; }

TEST(DiffCli, JsonOfEmptyCacheFix) {
  std::string cmd = testing::cli_path() + " diff --json - --top 3 " + example("empty_cache") + " " +
                    example("eager_bf16_baseline") + "/rank0.json.gz 2>/dev/null";
  int rc = -1;
  std::string out = testing::run_shell(cmd, rc);
  ASSERT_EQ(rc, 0) << cmd;
  json j = json::parse(out);
  EXPECT_EQ(j["schema"], "stepscope.diff");
  EXPECT_EQ(j["schema_version"], 2);
  EXPECT_EQ(j["before"]["ranks"], 1);
  EXPECT_EQ(j["before"]["steps"], 3);
  EXPECT_EQ(j["before"]["device"], "NVIDIA H200");
  EXPECT_EQ(j["after"]["inputs"][0], example("eager_bf16_baseline") + "/rank0.json.gz");
  EXPECT_EQ(j["thresholds"]["top_kernels"], 3);

  double before = j["step_us"]["before"], after = j["step_us"]["after"];
  EXPECT_GT(before, after);
  EXPECT_DOUBLE_EQ(j["step_us"]["change"].get<double>(), after - before);
  ASSERT_EQ(j["attribution"].size(), 10u);
  double sum = 0;
  for (const auto& b : j["attribution"]) sum += b["us_per_step"]["before"].get<double>();
  EXPECT_NEAR(sum, before, 1e-6 * before);

  bool allocator_resolved = false;
  for (const auto& f : j["findings"]["items"]) {
    if (f["category"] == "memory_allocator") {
      allocator_resolved = f["change"] == "resolved";
      EXPECT_TRUE(f["before"]["reported"].get<bool>());
      EXPECT_GT(f["before"]["estimated_saving_us"].get<double>(), 1000.0);
    }
  }
  EXPECT_TRUE(allocator_resolved);
  EXPECT_GE(j["findings"]["resolved"].get<int>(), 1);

  const json& changes = j["kernels"]["changes"];
  for (const char* c : {"removed", "added", "slower", "faster", "called_more", "called_less"}) {
    ASSERT_TRUE(changes.contains(c)) << c;
    EXPECT_LE(changes[c]["top"].size(), 3u);
    EXPECT_LE(changes[c]["top"].size(), changes[c]["kernels"].get<size_t>());
  }
  for (const auto& k : changes["removed"]["top"]) {
    EXPECT_TRUE(k["after"].is_null());
    EXPECT_LT(k["us_per_step_change"].get<double>(), 0);
  }
}

TEST(DiffCli, TerminalReportHasEverySection) {
  std::string cmd = testing::cli_path() + " diff " + example("fp32_no_tf32") + " " + example("eager_bf16_baseline") +
                    " 2>/dev/null";
  int rc = -1;
  std::string out = testing::run_shell(cmd, rc);
  ASSERT_EQ(rc, 0) << cmd;
  for (const char* s : {"stepscope diff", "Step time", "step time (ms)", "GPU busy share", "Where step time went",
                        "compute_matmul_simt", "Findings:", "resolved", "compute_efficiency", "Kernels by name",
                        "removed:", "mean (µs)"})
    EXPECT_NE(out.find(s), std::string::npos) << s << "\n" << out;
}

TEST(DiffCli, JsonFileAndQuiet) {
  std::string path = ::testing::TempDir() + "/stepscope_diff_test.json";
  std::string cmd = testing::cli_path() + " diff -q --json " + path + " " + example("cuda_graph") + " " +
                    example("cuda_graph") + " 2>/dev/null";
  int rc = -1;
  std::string out = testing::run_shell(cmd, rc);
  ASSERT_EQ(rc, 0) << cmd;
  EXPECT_TRUE(out.empty()) << out;
  FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  std::remove(path.c_str());
  json j = json::parse(text);
  EXPECT_EQ(j["step_us"]["change"], 0.0);
  EXPECT_EQ(j["findings"]["resolved"], 0);
  EXPECT_EQ(j["findings"]["new"], 0);
  EXPECT_EQ(j["kernels"]["changes"]["added"]["kernels"], 0);
}

TEST(DiffCli, MissingInputFails) {
  std::string cmd = testing::cli_path() + " diff " + example("cuda_graph") + " /nonexistent/trace.json.gz 2>&1";
  int rc = -1;
  std::string out = testing::run_shell(cmd, rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("after"), std::string::npos) << out;
  // One argument only is a usage error.
  testing::run_shell(testing::cli_path() + " diff " + example("cuda_graph") + " 2>&1", rc);
  EXPECT_NE(rc, 0);
}

}  // namespace
}  // namespace stepscope::diff
