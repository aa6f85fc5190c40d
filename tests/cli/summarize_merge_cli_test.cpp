// `stepscope summarize` and `stepscope merge` as a user runs them: one summary
// per file of a set, then the merge, whose JSON equals analyze's, the diagnosis
// included, apart from what merge does not make from summaries; bad input is one line naming the file and exit 2.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "summary/summary_fixtures.h"
#include "test_paths.h"

namespace stepscope::cli {
namespace {

using nlohmann::json;
using testing::CliRun;
using testing::run_cli;

// The report less what says how it was made and what merge does not make
// from summaries (tests/summary/summary_fixtures.h).
nlohmann::ordered_json comparable(const std::string& text, bool merged) {
  return testing_support::comparable_diagnosis(testing_support::comparable(nlohmann::ordered_json::parse(text)),
                                               merged);
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
  EXPECT_EQ(json::parse(m.out)["inputs"], json::array({out}));
  EXPECT_EQ(comparable(m.out, true), comparable(a.out, false));
  // The terminal report says where it came from and what it lacks.
  CliRun t = run_cli(dir, {"merge", out});
  ASSERT_EQ(t.exit_code, 0);
  EXPECT_EQ(t.out.rfind("stepscope merge: 8 ranks", 0), 0u) << t.out.substr(0, 200);
  EXPECT_NE(t.out.find("what needs every rank's step graph is not merged"), std::string::npos);
  // The diagnosis, from the summaries, as analyze says it (a CPU-only set: no GPU activity to attribute).
  CliRun ta = run_cli(dir, {"analyze", set});
  ASSERT_EQ(ta.exit_code, 0);
  const std::string said = "Where step time went: not assessed: the traces have no GPU activity";
  EXPECT_NE(ta.out.find(said), std::string::npos) << ta.out.substr(0, 1500);
  EXPECT_NE(t.out.find(said), std::string::npos) << t.out.substr(0, 1500);
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
