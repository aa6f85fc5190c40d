// `analyze --compat` picks the HTA release whose numbers it reproduces:
// "hta" is 0.6.1, "hta-0.5.0" the PyPI release. Checked through the built
// binary on a bundled PyTorch 2.11 trace against what HTA 0.5.0 wrote for it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "cli_run.h"
#include "test_paths.h"

namespace stepscope::cli {
namespace {

using nlohmann::json;
using testing::run_cli;
using testing::TempDir;

const std::string kExample = "item_sync";  // has cuLaunchKernelEx launches (cuBLASLt GEMMs)

json analyze(const TempDir& dir, const std::string& compat) {
  const std::string trace = testing::source_dir() + "/examples/" + kExample + "/rank0.json.gz";
  const auto r = run_cli(dir, {"analyze", "-q", "--json", "-", "--compat", compat, trace});
  EXPECT_EQ(r.exit_code, 0);
  return json::parse(r.out);
}

double reference_queue_count() {
  std::ifstream in(testing::test_data_dir() + "/hta_reference/" + kExample + ".json");
  const json ref = json::parse(in);
  return ref["queue_length_summary"][0]["queue_length/count"].get<double>();
}

TEST(CliCompatRelease, Hta050ReproducesThePypiRelease) {
  TempDir dir;
  const json j = analyze(dir, "hta-0.5.0");
  EXPECT_EQ(j["mode"], "hta-0.5.0");
  EXPECT_NE(j["hta"]["produced_as"].get<std::string>().find("0.5.0"), std::string::npos);
  EXPECT_EQ(j["hta"]["queue_length_summary"][0]["queue_length"]["count"].get<double>(), reference_queue_count());
}

TEST(CliCompatRelease, HtaMeans061AndCountsMoreLaunches) {
  TempDir dir;
  const json plain = analyze(dir, "hta");
  const json named = analyze(dir, "hta-0.6.1");
  EXPECT_NE(plain["hta"]["produced_as"].get<std::string>().find("0.6.1"), std::string::npos);
  EXPECT_EQ(plain["hta"]["queue_length_summary"], named["hta"]["queue_length_summary"]);
  // 0.6.1 queues the cuLaunchKernelEx launches too: +1 and -1 for each.
  EXPECT_GT(plain["hta"]["queue_length_summary"][0]["queue_length"]["count"].get<double>(), reference_queue_count());
}

TEST(CliCompatRelease, UnknownReleaseIsRejected) {
  TempDir dir;
  const auto r = run_cli(dir, {"analyze", "--compat", "hta-0.4.0", testing::source_dir() + "/examples"});
  EXPECT_NE(r.exit_code, 0);
  ASSERT_FALSE(r.err_lines.empty());
  EXPECT_NE(r.err_lines[0].find("--compat"), std::string::npos) << r.err_lines[0];
  EXPECT_TRUE(r.out.empty());
}

}  // namespace
}  // namespace stepscope::cli
