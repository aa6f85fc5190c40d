// `stepscope bench` and `analyze --profile` from the command line: the
// errors a user sees without CUDA, without a GPU and with a bad profile.
#include <gtest/gtest.h>

#include "cli_run.h"
#include "test_paths.h"
#include "hwbench/profile_fixture.h"
#include "hwbench/profile_json.h"

#ifdef STEPSCOPE_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace stepscope::hwbench {
namespace {

using stepscope::testing::run_cli;
using stepscope::testing::TempDir;

bool gpu_present() {
#ifdef STEPSCOPE_HAVE_CUDA
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
#else
  return false;
#endif
}

TEST(BenchCli, WithoutGpuOrCudaFailsWithOneLine) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present: the GPU tests cover the bench";
  TempDir dir;
  stepscope::testing::CliRun r = run_cli(dir, {"bench", "--quick", "-o", dir.file("p.json")});
  EXPECT_EQ(r.exit_code, 3);
  ASSERT_EQ(r.err_lines.size(), 1u);
#ifdef STEPSCOPE_HAVE_CUDA
  EXPECT_NE(r.err_lines[0].find("stepscope: error: bench: no"), std::string::npos) << r.err_lines[0];
  EXPECT_NE(r.err_lines[0].find("CUDA GPU"), std::string::npos) << r.err_lines[0];
#else
  EXPECT_EQ(r.err_lines[0], "stepscope: error: bench: this stepscope was built without CUDA (no CUDA compiler at configure time, or -DSTEPSCOPE_CUDA=OFF)");
#endif
}

TEST(BenchCli, UnwritableOutputFailsBeforeMeasuring) {
  TempDir dir;
  stepscope::testing::CliRun r = run_cli(dir, {"bench", "--quick", "-o", dir.file("no/such/folder/p.json")});
#ifdef STEPSCOPE_HAVE_CUDA
  // Checked before any GPU work, so the same with or without a GPU.
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(r.err_lines.size(), 1u);
  EXPECT_NE(r.err_lines[0].find("cannot write the hardware profile"), std::string::npos) << r.err_lines[0];
#else
  EXPECT_EQ(r.exit_code, 3);  // built without CUDA: that error comes first
#endif
}

TEST(BenchCli, UnknownSectionIsRejected) {
  TempDir dir;
  stepscope::testing::CliRun r = run_cli(dir, {"bench", "--only", "disks"});
  EXPECT_NE(r.exit_code, 0);
}

TEST(AnalyzeProfileCli, ReadsAProfileAndRejectsBadOnes) {
  TempDir dir;
  std::string trace = stepscope::testing::source_dir() + "/examples/fp32_no_tf32/rank0.json.gz";
  std::string good = dir.write("h200.json", profile_to_json(testing::h200_profile()).dump(1));
  stepscope::testing::CliRun ok = run_cli(dir, {"analyze", trace, "--profile", good, "-q", "--json", dir.file("a.json")});
  EXPECT_EQ(ok.exit_code, 0);
  // The diagnosis names the peak row it compared with: the profile's device,
  // not the datasheet row "NVIDIA H200 SXM" the trace's device name maps to.
  nlohmann::json report = nlohmann::json::parse(stepscope::testing::read_file(dir.file("a.json")));
  EXPECT_NE(report.dump().find("\"hardware\":[\"NVIDIA H200\"]"), std::string::npos);
  EXPECT_TRUE(report["warnings"].empty()) << report["warnings"].dump();  // same GPU model: nothing to say
  stepscope::testing::CliRun plain = run_cli(dir, {"analyze", trace, "-q", "--json", dir.file("b.json")});
  EXPECT_EQ(plain.exit_code, 0);
  EXPECT_NE(stepscope::testing::read_file(dir.file("b.json")).find("NVIDIA H200 SXM"), std::string::npos);

  stepscope::testing::CliRun missing = run_cli(dir, {"analyze", trace, "--profile", dir.file("none.json"), "-q"});
  EXPECT_EQ(missing.exit_code, 2);
  ASSERT_EQ(missing.err_lines.size(), 1u);
  EXPECT_EQ(missing.err_lines[0], "stepscope: error: " + dir.file("none.json") + ": cannot open");

  std::string planner_only = dir.write("plan.json", R"({"gpu": "h200-sxm", "hbm_gbps": 4000})");
  stepscope::testing::CliRun old = run_cli(dir, {"analyze", trace, "--profile", planner_only, "-q"});
  EXPECT_EQ(old.exit_code, 2);
  ASSERT_EQ(old.err_lines.size(), 1u);
  EXPECT_EQ(old.err_lines[0], "stepscope: error: " + planner_only + ": field \"stepscope_bench\" is missing");
}

// A profile of another GPU model is used as asked, with a warning naming both.
TEST(AnalyzeProfileCli, ProfileOfAnotherGpuIsSaid) {
  SKIP_WITHOUT_SHARED();
  TempDir dir;
  const std::string trace = stepscope::testing::shared_dir() + "/conformance/hta/negative_queue_length_values_check";
  std::string good = dir.write("h200.json", profile_to_json(testing::h200_profile()).dump(1));
  stepscope::testing::CliRun r = run_cli(dir, {"analyze", trace, "--profile", good, "-q", "--json", dir.file("a.json")});
  ASSERT_EQ(r.exit_code, 0);
  nlohmann::json report = nlohmann::json::parse(stepscope::testing::read_file(dir.file("a.json")));
  bool said = false;
  for (const auto& w : report["warnings"]) {
    const std::string text = w.get<std::string>();
    said = said || (text.find("A100") != std::string::npos && text.find("NVIDIA H200") != std::string::npos &&
                    text.find("ceilings are used") != std::string::npos);
  }
  EXPECT_TRUE(said) << report["warnings"].dump();
}

}  // namespace
}  // namespace stepscope::hwbench
