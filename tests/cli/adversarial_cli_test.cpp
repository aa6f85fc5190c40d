// The CLI against adversarial conditions (issue #25): outputs that cannot be
// written, inputs with nothing to analyse, files named twice or not at all,
// names that try to drive the terminal, and resource limits. Each case writes
// a small generated input to a temporary folder, runs the built binary and
// asserts the exit code and the message.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "test_paths.h"
#include "trace/trace_fixtures.h"

namespace stepscope::cli {
namespace {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::joined;
using testing::run_cli;
using testing::shell_quote;
using testing::TempDir;

// Like run_cli, but stdout goes to `stdout_path` (e.g. /dev/full).
CliRun run_cli_to(const TempDir& dir, const std::vector<std::string>& args, const std::string& stdout_path,
                  const std::string& shell_prefix = "") {
  std::string cmd = shell_prefix + "exec " + shell_quote(testing::cli_path());
  for (const auto& a : args) cmd.append(" ").append(shell_quote(a));
  const std::string err = dir.file("cli.err");
  cmd.append(" >").append(shell_quote(stdout_path)).append(" 2>").append(shell_quote(err));
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::istringstream in(testing::read_file(err));
  for (std::string line; std::getline(in, line);) r.err_lines.push_back(line);
  return r;
}

// Exit 2 and exactly one stderr line, equal to `line`.
void expect_error(const CliRun& r, const std::string& line) {
  EXPECT_EQ(r.exit_code, 2) << joined(r.err_lines);
  ASSERT_EQ(r.err_lines.size(), 1u) << joined(r.err_lines);
  EXPECT_EQ(r.err_lines[0], line);
}

// Exit 2 and exactly one stderr line that starts with `prefix`.
void expect_error_prefix(const CliRun& r, const std::string& prefix) {
  EXPECT_EQ(r.exit_code, 2) << joined(r.err_lines);
  ASSERT_EQ(r.err_lines.size(), 1u) << joined(r.err_lines);
  EXPECT_EQ(r.err_lines[0].rfind(prefix, 0), 0u) << r.err_lines[0];
}

// A small trace with a CPU op, its launch and the kernel it launched.
std::string gpu_trace(const std::string& kernel_name = "gemm_kernel", const std::string& op_name = "aten::mm") {
  using testing::x_event;
  return testing::trace_doc({
      x_event("cpu_op", op_name, "1000", "50", "1", "1", R"("args": {"External id": 1})"),
      x_event("cuda_runtime", "cudaLaunchKernel", "1010", "5", "1", "1",
              R"("args": {"correlation": 1, "External id": 1})"),
      x_event("kernel", kernel_name, "1020", "30", "0", "7",
              R"("args": {"device": 0, "stream": 7, "correlation": 1, "External id": 1})"),
  });
}

// A trace whose every record is skipped ("ts" is not a number).
std::string all_records_bad() {
  using testing::x_event;
  return testing::trace_doc({x_event("cpu_op", "a", "\"abc\"", "1"), x_event("cpu_op", "b", "\"x\"", "1")});
}

std::vector<std::string> folder_names(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(folder)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

const std::vector<std::string> kPlanArgs = {"plan", "--model", "gpt3-175b", "--gpu", "a100-80-sxm", "--tp", "8",
                                            "--pp", "8"};

// ---- 1. outputs -----------------------------------------------------------

// A report that does not reach stdout is an error, whatever the subcommand.
TEST(CliAdversarial, StdoutOnAFullDeviceIsAnErrorInEverySubcommand) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  TempDir dir;
  const std::string a = dir.write("a.json", gpu_trace());
  const std::string full = "stepscope: error: standard output: cannot write: No space left on device";
  expect_error(run_cli_to(dir, {"analyze", a}, "/dev/full"), full);
  expect_error(run_cli_to(dir, {"analyze", "--compat", "hta", a}, "/dev/full"), full);
  expect_error(run_cli_to(dir, {"analyze", "-q", "--json", "-", a}, "/dev/full"), full);
  expect_error(run_cli_to(dir, {"diff", a, a}, "/dev/full"), full);
  expect_error(run_cli_to(dir, kPlanArgs, "/dev/full"), full);
  std::vector<std::string> plan_json = kPlanArgs;
  plan_json.insert(plan_json.end(), {"--json", "-"});
  expect_error(run_cli_to(dir, plan_json, "/dev/full"), full);
  expect_error(run_cli_to(dir, {"plan", "search", "--model", "llama2-7b", "--gpus", "8", "--global-batch", "64"}, "/dev/full"), full);
  // Text written by the argument parser itself (--help) is checked by main.
  const CliRun help = run_cli_to(dir, {"--help"}, "/dev/full");
  expect_error_prefix(help, "stepscope: error: standard output: cannot write: ");
}

// Output paths are opened before any input is read: with a missing trace
// AND a bad output, the error names the output.
TEST(CliAdversarial, BadOutputPathFailsBeforeTheInputIsRead) {
  TempDir dir;
  const std::string missing_trace = dir.file("missing.json");
  const std::string bad = dir.file("no-such-folder/out.json");
  const std::string enoent = ": cannot write: No such file or directory";
  for (const char* opt : {"--json", "--html", "--perfetto"})
    expect_error(run_cli(dir, {"analyze", opt, bad, missing_trace}), "stepscope: error: " + bad + enoent);
  expect_error(run_cli(dir, {"diff", "--json", bad, missing_trace, missing_trace}), "stepscope: error: " + bad + enoent);
  std::vector<std::string> plan_json = kPlanArgs;
  plan_json.insert(plan_json.end(), {"--json", bad});
  expect_error(run_cli(dir, plan_json), "stepscope: error: " + bad + enoent);
  expect_error(run_cli(dir, {"plan", "search", "--model", "llama2-7b", "--gpus", "8", "--global-batch", "64", "--json", bad}),
               "stepscope: error: " + bad + enoent);
  // A folder is not a file to write.
  expect_error(run_cli(dir, {"analyze", "--json", dir.path().string(), missing_trace}),
               "stepscope: error: " + dir.path().string() + ": cannot write: is a folder");
  EXPECT_EQ(folder_names(dir.path()), (std::vector<std::string>{"cli.err", "cli.out"}));
}

// A write that fails part-way (here the file-size limit, EFBIG: what a full
// disk does with ENOSPC) leaves neither a half-written file nor a temporary
// one, and the file that was there before is untouched.
TEST(CliAdversarial, WriteFailurePartWayLeavesNoPartialFile) {
  TempDir dir;
  std::vector<std::string> events = testing::cpu_ops(3000);
  const std::string trace = dir.write("rank0.json", testing::trace_doc(events));
  // dash counts ulimit -f in 512-byte blocks, bash in 1 KiB: 2-4 KiB either
  // way, above the stderr line and below every report written here.
  const std::string limit = "ulimit -f 4; ";
  for (const char* opt : {"--json", "--html", "--perfetto"}) {
    SCOPED_TRACE(opt);
    const std::string out = dir.write(std::string("out") + (opt + 1), "old");
    const CliRun r = run_cli(dir, {"analyze", "-q", opt, out, trace}, limit);
    expect_error(r, "stepscope: error: " + out + ": cannot write: File too large");
    EXPECT_EQ(testing::read_file(out), "old");
  }
  const std::string diff_out = dir.write("diff.json", "old");
  expect_error(run_cli(dir, {"diff", "-q", "--json", diff_out, trace, trace}, limit),
               "stepscope: error: " + diff_out + ": cannot write: File too large");
  EXPECT_EQ(testing::read_file(diff_out), "old");
  // The plan's JSON is about 2 KB: a limit of 1 block.
  const std::string plan_out = dir.file("plan.json");
  std::vector<std::string> plan_json = kPlanArgs;
  plan_json.insert(plan_json.end(), {"--json", plan_out});
  expect_error(run_cli(dir, plan_json, "ulimit -f 1; "),
               "stepscope: error: " + plan_out + ": cannot write: File too large");
  EXPECT_FALSE(fs::exists(plan_out));
  EXPECT_EQ(folder_names(dir.path()), (std::vector<std::string>{"cli.err", "cli.out", "diff.json", "out-html",
                                                                "out-json", "out-perfetto", "rank0.json"}));
}

// Written in full, the output lands under its name and nothing else remains.
TEST(CliAdversarial, OutputsLandWholeUnderTheirNames) {
  TempDir dir;
  const std::string trace = dir.write("rank0.json", gpu_trace());
  const CliRun r = run_cli(dir, {"analyze", "-q", "--json", dir.file("r.json"), "--html", dir.file("r.html"),
                                 "--perfetto", dir.file("r.pf.json.gz"), trace});
  ASSERT_EQ(r.exit_code, 0) << joined(r.err_lines);
  EXPECT_EQ(nlohmann::json::parse(testing::read_file(dir.file("r.json")))["ranks"].size(), 1u);
  EXPECT_NE(testing::read_file(dir.file("r.html")).find("</html>"), std::string::npos);
  EXPECT_NE(testing::gunzip_file(dir.file("r.pf.json.gz")).find("gemm_kernel"), std::string::npos);
  EXPECT_EQ(folder_names(dir.path()),
            (std::vector<std::string>{"cli.err", "cli.out", "r.html", "r.json", "r.pf.json.gz", "rank0.json"}));
}

// ---- 2. nothing to analyse ----------------------------------------------

TEST(CliAdversarial, NothingAnalysableIsAnErrorNamingTheFile) {
  TempDir dir;
  const std::string bad = dir.write("bad.json", all_records_bad());
  const CliRun r = run_cli(dir, {"analyze", bad});
  expect_error(r, "stepscope: error: " + bad +
                      ": no analysable event (no complete 'X' or instant 'i' event kept from traceEvents; "
                      "2 malformed records skipped (first at byte 47))");
  EXPECT_TRUE(r.out.empty());

  const std::string empty = dir.write("empty.json", R"({"traceEvents": []})");
  expect_error(run_cli(dir, {"analyze", empty}),
               "stepscope: error: " + empty +
                   ": no analysable event (no complete 'X' or instant 'i' event kept from traceEvents)");
  expect_error_prefix(run_cli(dir, {"analyze", bad, empty}),
                      "stepscope: error: no analysable event in any of the 2 files: " + bad + " (");
  // diff: either side.
  const std::string good = dir.write("good.json", gpu_trace());
  expect_error_prefix(run_cli(dir, {"diff", good, bad}), "stepscope: error: after: " + bad + ": no analysable event (");
  expect_error_prefix(run_cli(dir, {"diff", empty, good}),
                      "stepscope: error: before: " + empty + ": no analysable event (");
}

TEST(CliAdversarial, RankWithNothingAnalysableAmongGoodOnesIsDroppedWithAWarning) {
  TempDir dir;
  dir.write("run/rank0.json", gpu_trace());
  const std::string bad = dir.write("run/rank1.json", all_records_bad());
  const CliRun r = run_cli(dir, {"analyze", "-q", "--json", "-", dir.file("run")});
  ASSERT_EQ(r.exit_code, 0) << joined(r.err_lines);
  ASSERT_EQ(r.err_lines.size(), 1u) << joined(r.err_lines);
  EXPECT_EQ(r.err_lines[0].rfind("stepscope: warning: dropped " + bad + ": no analysable event (", 0), 0u)
      << r.err_lines[0];
  EXPECT_EQ(nlohmann::json::parse(r.out)["ranks"].size(), 1u);
}

// ---- 3. inputs read twice or not at all ----------------------------------

TEST(CliAdversarial, OneFileIsOneRankHoweverItIsNamed) {
  TempDir dir;
  const std::string a = dir.write("run/rank0.json", gpu_trace());
  const std::string dotted = dir.file("run/./rank0.json");
  const std::string link = dir.file("link.json");
  fs::create_symlink(a, link);
  const CliRun r = run_cli(dir, {"analyze", "-q", "--json", "-", a, dotted, link, dir.file("run")});
  ASSERT_EQ(r.exit_code, 0) << joined(r.err_lines);
  EXPECT_TRUE(r.err_lines.empty()) << joined(r.err_lines);
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["ranks"].size(), 1u);
  // Sorted by path, the first name is kept; the others are noted.
  EXPECT_EQ(j["notes"], nlohmann::json({dotted + ": the same file as " + link + ", read once",
                                        a + ": the same file as " + link + ", read once"}));
}

// A broken link in a folder is skipped with a warning naming it, wherever it
// sorts; one named on the command line is an error naming it.
TEST(CliAdversarial, BrokenLinksAreSkippedInFoldersAndAnErrorWhenNamed) {
  TempDir dir;
  dir.write("run/rank0.json", gpu_trace());
  const std::string first = dir.file("run/aa.json"), last = dir.file("run/zz.json");
  fs::create_symlink(dir.file("gone1.json"), first);
  fs::create_symlink(dir.file("gone2.json"), last);
  const CliRun r = run_cli(dir, {"analyze", "-q", dir.file("run")});
  EXPECT_EQ(r.exit_code, 0) << joined(r.err_lines);
  EXPECT_EQ(r.err_lines, (std::vector<std::string>{
                             "stepscope: warning: skipped " + first + ": broken symbolic link (to " + dir.file("gone1.json") + ")",
                             "stepscope: warning: skipped " + last + ": broken symbolic link (to " + dir.file("gone2.json") + ")"}));
  expect_error(run_cli(dir, {"analyze", last}),
               "stepscope: error: " + last + ": broken symbolic link (to " + dir.file("gone2.json") + ")");
  // A folder of broken links only: the error says why nothing was read.
  fs::remove(dir.file("run/rank0.json"));
  expect_error(run_cli(dir, {"analyze", dir.file("run")}),
               "stepscope: error: " + dir.file("run") +
                   ": folder holds no .json or .json.gz files that can be read (skipped " + first +
                   ": broken symbolic link (to " + dir.file("gone1.json") + "))");
}

// ---- 4. terminal injection -------------------------------------------------

// JSON text of a name that clears the screen, sets the window title, holds a
// C1 CSI (U+009B) and a newline.
const std::string kEvilJson = R"(evil\u001b]0;pwned\u0007\u001b[2J\u009b31m\nnext)";
const std::string kEvilExact = "evil\x1b]0;pwned\x07\x1b[2J\xc2\x9b" "31m\nnext";
const std::string kEvilShown = R"(evil\x1b]0;pwned\x07\x1b[2J\u009b31m\nnext)";

// True when `text` has a control character other than '\n'.
bool has_control(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(text[i + 1]) <= 0x9f)
      return true;
  }
  return false;
}

TEST(CliAdversarial, NamesFromTheTraceCannotDriveTheTerminal) {
  TempDir dir;
  const std::string evil = dir.write("evil.json", gpu_trace("gemm_" + kEvilJson, "aten::mm_" + kEvilJson));
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"analyze", evil}, {"analyze", "--compat", "hta", evil}}) {
    const CliRun r = run_cli(dir, args);
    ASSERT_EQ(r.exit_code, 0) << joined(r.err_lines);
    EXPECT_FALSE(has_control(r.out)) << r.out;
    EXPECT_NE(r.out.find("gemm_" + kEvilShown), std::string::npos) << r.out;
  }
  // diff: the kernel only the "after" run has is listed by name.
  const std::string plain = dir.write("plain.json", gpu_trace());
  const CliRun d = run_cli(dir, {"diff", plain, evil});
  ASSERT_EQ(d.exit_code, 0) << joined(d.err_lines);
  EXPECT_FALSE(has_control(d.out)) << d.out;
  EXPECT_NE(d.out.find("gemm_" + kEvilShown), std::string::npos) << d.out;
  // The JSON report keeps the exact name.
  const CliRun j = run_cli(dir, {"analyze", "-q", "--json", "-", evil});
  ASSERT_EQ(j.exit_code, 0);
  EXPECT_NE(j.out.find(nlohmann::json("gemm_" + kEvilExact).dump()), std::string::npos);
}

TEST(CliAdversarial, FileNamesInErrorsAndWarningsStayOneLine) {
  TempDir dir;
  const std::string name = dir.write("bad\nname\x1b[2J.json", "garbage");
  const std::string shown = dir.file(R"(bad\nname\x1b[2J.json)");
  expect_error_prefix(run_cli(dir, {"analyze", name}), "stepscope: error: " + shown + ": ");
  const std::string out = dir.file("no\nfolder/x.json");
  expect_error(run_cli(dir, {"analyze", "--json", out, name}),
               "stepscope: error: " + dir.file(R"(no\nfolder/x.json)") + ": cannot write: No such file or directory");
  // A warning naming a dropped rank.
  dir.write("run/rank0.json", gpu_trace());
  dir.write("run/r\x1b]0;x\x07.json", all_records_bad());
  const CliRun r = run_cli(dir, {"analyze", "-q", dir.file("run")});
  EXPECT_EQ(r.exit_code, 0);
  ASSERT_EQ(r.err_lines.size(), 1u) << joined(r.err_lines);
  EXPECT_EQ(r.err_lines[0].rfind("stepscope: warning: dropped " + dir.file(R"(run/r\x1b]0;x\x07.json)"), 0), 0u)
      << r.err_lines[0];
}

// ---- 5. no uncaught exception ----------------------------------------------

// Threads that cannot be started (each would need a 4 GB stack under a 3 GB
// address-space limit): an error line or a slower run, never an abort.
#if defined(__SANITIZE_ADDRESS__)
#define STEPSCOPE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STEPSCOPE_ASAN 1
#endif
#endif
TEST(CliAdversarial, ThreadsThatCannotStartDoNotAbort) {
#ifdef STEPSCOPE_ASAN
  GTEST_SKIP() << "ulimit -v cannot be combined with AddressSanitizer";
#endif
  TempDir dir;
  const std::string a = dir.write("rank0.json", gpu_trace());
  const std::string b = dir.write("rank1.json", gpu_trace());
  const CliRun r = run_cli(dir, {"analyze", "-q", "--threads", "2", a, b}, "ulimit -v 3000000; ulimit -s 4000000; ");
  // Reading and analysing both carry on with the threads that did start.
  EXPECT_EQ(r.exit_code, 0) << joined(r.err_lines);
}

}  // namespace
}  // namespace stepscope::cli
