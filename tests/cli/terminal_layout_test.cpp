// The default terminal report of `stepscope analyze`: it fits 100 columns on
// every bundled example and on multi-rank sets, opens with the attribution,
// the primary bottleneck, the findings and a five-line summary, keeps the
// statistics tables for --details, colours only when asked or on a terminal,
// and names every file it writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.h"
#include "report/terminal_text.h"
#include "test_paths.h"

namespace stepscope::cli {
namespace {

namespace fs = std::filesystem;
using testing::run_cli;
using testing::TempDir;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

void expect_fits(const std::string& report, const std::string& what) {
  int n = 0;
  for (const std::string& l : lines_of(report)) {
    ++n;
    EXPECT_LE(report::display_width(l), report::kTerminalWidth) << what << " line " << n << ": " << l;
  }
}

std::vector<std::string> example_dirs() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(testing::source_dir() + "/examples"))
    if (e.is_directory()) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(TerminalLayout, EveryExampleFitsOneHundredColumns) {
  TempDir dir;
  const auto examples = example_dirs();
  ASSERT_GE(examples.size(), 10u);
  for (const std::string& ex : examples) {
    testing::CliRun r = run_cli(dir, {"analyze", ex});
    ASSERT_EQ(r.exit_code, 0) << ex << "\n" << testing::joined(r.err_lines);
    expect_fits(r.out, ex);
    // The opening: where the time went, the primary bottleneck, the findings, the summary.
    const size_t where = r.out.find("Where step time went");
    const size_t primary = r.out.find("Primary bottleneck: ");
    const size_t summary = r.out.find("\nSummary\n");
    ASSERT_NE(where, std::string::npos) << ex;
    ASSERT_NE(primary, std::string::npos) << ex;
    ASSERT_NE(summary, std::string::npos) << ex;
    EXPECT_LT(where, primary);
    EXPECT_LT(primary, summary);
    // Five lines of summary, then the pointer to the tables.
    std::vector<std::string> after = lines_of(r.out.substr(summary + 1));
    ASSERT_GE(after.size(), 6u);
    for (int i = 1; i <= 5; ++i) EXPECT_EQ(after[i].rfind("  ", 0), 0u) << ex << ": " << after[i];
    EXPECT_EQ(r.out.find("Kernels by type"), std::string::npos) << ex << ": tables belong to --details";
    EXPECT_NE(r.out.find("--details"), std::string::npos);
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << ex << ": colour on a pipe";
  }
}

TEST(TerminalLayout, MultiRankSetsFit) {
  TempDir dir;
  for (const char* set : {"/conformance/hta/trace_filter", "/conformance/param/dlrm_8rank"}) {
    const std::string path = testing::shared_dir() + set;
    if (!fs::exists(path)) GTEST_SKIP() << path << " absent";
    testing::CliRun r = run_cli(dir, {"analyze", path});
    ASSERT_EQ(r.exit_code, 0) << path << "\n" << testing::joined(r.err_lines);
    expect_fits(r.out, path);
    EXPECT_NE(r.out.find("  ranks    "), std::string::npos) << r.out;
  }
}

TEST(TerminalLayout, DetailsAddTheStatisticsTables) {
  TempDir dir;
  testing::CliRun r = run_cli(dir, {"analyze", testing::source_dir() + "/examples/host_bound_tiny", "--details"});
  ASSERT_EQ(r.exit_code, 0);
  for (const char* table : {"GPU time breakdown", "Steps", "Kernels by type", "Idle time per stream",
                            "Kernel launches", "Caching allocator"})
    EXPECT_NE(r.out.find(std::string("\n") + table), std::string::npos) << table;
}

TEST(TerminalLayout, ColourWhenAskedAndNeverWithNoColor) {
  TempDir dir;
  const std::string ex = testing::source_dir() + "/examples/item_sync";
  testing::CliRun always = run_cli(dir, {"analyze", ex, "--color", "always"});
  ASSERT_EQ(always.exit_code, 0);
  EXPECT_NE(always.out.find("\x1b[1mPrimary bottleneck: "), std::string::npos);
  testing::CliRun never = run_cli(dir, {"analyze", ex, "--color", "never"});
  EXPECT_EQ(never.out.find('\x1b'), std::string::npos);
  // auto on a terminal: `script` gives the CLI a pseudo-terminal where it exists.
  int rc = 0;
  const std::string probe = testing::run_shell("command -v script", rc);
  if (rc != 0 || probe.empty()) GTEST_SKIP() << "no `script` for a pseudo-terminal";
  const std::string cmd = "script -qec " + testing::shell_quote(testing::shell_quote(testing::cli_path()) +
                                                                 " analyze " + testing::shell_quote(ex)) +
                          " /dev/null";
  const std::string tty = testing::run_shell(cmd, rc);
  EXPECT_NE(tty.find("\x1b[1m"), std::string::npos) << "a terminal gets colour";
  const std::string plain = testing::run_shell("NO_COLOR=1 " + cmd, rc);
  EXPECT_EQ(plain.find("\x1b["), std::string::npos) << "NO_COLOR turns it off";
}

TEST(TerminalLayout, FilesWrittenAreNamedOnStderr) {
  TempDir dir;
  const std::string json = dir.file("r.json"), html = dir.file("r.html"), pf = dir.file("r.json.gz");
  testing::CliRun r = run_cli(dir, {"analyze", testing::source_dir() + "/examples/item_sync", "-q", "--json", json,
                                    "--html", html, "--perfetto", pf});
  ASSERT_EQ(r.exit_code, 0) << testing::joined(r.err_lines);
  const std::string err = testing::joined(r.err_lines);
  for (const std::string& f : {json, html, pf}) {
    EXPECT_TRUE(fs::exists(f)) << f;
    EXPECT_NE(err.find("stepscope: wrote " + f + "\n"), std::string::npos) << err;
  }
  // stdout as the JSON output is not a file: nothing to name.
  testing::CliRun s = run_cli(dir, {"analyze", testing::source_dir() + "/examples/item_sync", "--json", "-"});
  EXPECT_EQ(testing::joined(s.err_lines).find("wrote"), std::string::npos);
}

TEST(TerminalLayout, UnknownDetectorIsAnErrorListingTheValidOnes) {
  TempDir dir;
  testing::CliRun r =
      run_cli(dir, {"analyze", testing::source_dir() + "/examples/item_sync", "--disable-detector", "host_sinc"});
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(r.err_lines.size(), 1u) << testing::joined(r.err_lines);
  EXPECT_NE(r.err_lines[0].find("unknown detector 'host_sinc'"), std::string::npos);
  EXPECT_NE(r.err_lines[0].find("host_sync"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::cli
