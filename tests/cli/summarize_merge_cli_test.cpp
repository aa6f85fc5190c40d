// `stepscope summarize` and `stepscope merge` as a user runs them: one summary
// per file of a set, then the merge, whose JSON equals analyze's apart from the
// diagnosis; bad input is one line naming the file and exit 2.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "test_paths.h"

namespace stepscope::cli {
namespace {

using nlohmann::json;
using testing::CliRun;
using testing::run_cli;

// analyze's report less what merge does not give (the diagnosis) and what says how it was made.
json comparable(json j) {
  for (const char* k : {"inputs", "read_seconds", "analysis_seconds", "job_replay", "job_critical_path",
                        "primary_bottleneck", "diagnosis"})
    j.erase(k);
  for (json& r : j["ranks"])
    for (const char* k : {"attribution", "replay", "critical_path"}) r.erase(k);
  return j;
}

TEST(SummarizeMergeCli, MergeOfEveryFileEqualsAnalyze) {
  testing::TempDir dir;
  const std::string set = testing::test_data_dir() + "/dist_gloo_cpu/straggler";
  const std::string out = (dir.path() / "summaries").string();
  std::filesystem::create_directories(out);
  for (const auto& e : std::filesystem::directory_iterator(set)) {
    const std::string name = e.path().filename().string();
    CliRun s = run_cli(dir, {"summarize", "--member-of-set", e.path().string(), "-o",
                             out + "/" + name + ".stepscope-summary"});
    ASSERT_EQ(s.exit_code, 0) << testing::joined(s.err_lines);
  }
  CliRun m = run_cli(dir, {"merge", out, "--json", "-"});
  ASSERT_EQ(m.exit_code, 0) << testing::joined(m.err_lines);
  CliRun a = run_cli(dir, {"analyze", set, "--json", "-"});
  ASSERT_EQ(a.exit_code, 0);
  const json merged = json::parse(m.out), analyzed = json::parse(a.out);
  EXPECT_EQ(merged["inputs"], json::array({out}));
  EXPECT_EQ(comparable(merged), comparable(analyzed));
  // The terminal report says where it came from and what it lacks.
  CliRun t = run_cli(dir, {"merge", out});
  ASSERT_EQ(t.exit_code, 0);
  EXPECT_EQ(t.out.rfind("stepscope merge: 8 ranks", 0), 0u) << t.out.substr(0, 200);
  EXPECT_NE(t.out.find("the diagnosis is not merged"), std::string::npos);
  // Without the attribution, the summary lines say what they stand on instead of "no step time".
  EXPECT_NE(t.out.find("ms mean CPU span of 3 ProfilerSteps"), std::string::npos)
      << t.out.substr(0, 800);
}

TEST(SummarizeMergeCli, BadInputIsOneLineAndExit2) {
  testing::TempDir dir;
  const std::string trace = testing::test_data_dir() + "/dist_gloo_cpu/straggler/rank0.json.gz";
  // A trace given to merge.
  CliRun m = run_cli(dir, {"merge", trace});
  EXPECT_EQ(m.exit_code, 2);
  ASSERT_EQ(m.err_lines.size(), 1u) << testing::joined(m.err_lines);
  EXPECT_EQ(m.err_lines[0], "stepscope: error: " + trace + ": not a stepscope summary (no STPSCSUM header)");
  // A folder of ranks given to summarize.
  CliRun s = run_cli(dir, {"summarize", testing::test_data_dir() + "/dist_gloo_cpu/straggler", "-o",
                           dir.file("x.stepscope-summary")});
  EXPECT_EQ(s.exit_code, 2);
  ASSERT_EQ(s.err_lines.size(), 1u);
  EXPECT_NE(s.err_lines[0].find("hold 8 ranks: a summary is of one rank"), std::string::npos) << s.err_lines[0];
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.stepscope-summary")));
  // A truncated summary.
  CliRun ok = run_cli(dir, {"summarize", trace, "-o", dir.file("r0.stepscope-summary")});
  ASSERT_EQ(ok.exit_code, 0);
  const std::string bytes = testing::read_file(dir.file("r0.stepscope-summary"));
  const std::string cut = dir.write("cut.stepscope-summary", bytes.substr(0, bytes.size() / 2));
  CliRun c = run_cli(dir, {"merge", cut});
  EXPECT_EQ(c.exit_code, 2);
  ASSERT_EQ(c.err_lines.size(), 1u);
  EXPECT_NE(c.err_lines[0].find(cut + ": summary body is"), std::string::npos) << c.err_lines[0];
  EXPECT_NE(c.err_lines[0].find("(truncated)"), std::string::npos) << c.err_lines[0];
  // A folder without summaries.
  CliRun e = run_cli(dir, {"merge", testing::test_data_dir() + "/dist_gloo_cpu"});
  EXPECT_EQ(e.exit_code, 2);
  ASSERT_EQ(e.err_lines.size(), 1u);
  EXPECT_NE(e.err_lines[0].find("folder holds no *.stepscope-summary files"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::cli
