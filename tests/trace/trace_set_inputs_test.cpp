// Which files a set of inputs names: one file is one rank however it is
// named, folder listings are sorted and skip broken entries with a warning,
// and ranks with nothing to analyse are dropped or, alone, an error.
#include <gtest/gtest.h>

#include <filesystem>

#include "trace/trace_fixtures.h"
#include "trace/trace_set.h"

namespace stepscope::trace {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string good_doc() { return testing::trace_doc(testing::cpu_ops(3)); }

TEST(TraceSetInputs, OneFileNamedFourWaysIsReadOnce) {
  TempDir dir;
  const std::string a = dir.write("run/rank0.json", good_doc());
  const std::string dotted = dir.file("run/./rank0.json");
  const std::string link = dir.file("alias.json");
  fs::create_symlink(a, link);
  ExpandedInputs e = expand_input_files({a, dotted, link, dir.file("run"), a});
  EXPECT_EQ(e.error, "");
  EXPECT_EQ(e.files, std::vector<std::string>{link});
  EXPECT_EQ(e.notes, (std::vector<std::string>{dotted + ": the same file as " + link + ", read once",
                                                a + ": the same file as " + link + ", read once"}));
  LoadResult r = load_traces({a, dotted, link}, ReadOptions{});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.set.ranks.size(), 1u);
  EXPECT_EQ(r.set.notes.size(), 2u);
}

// The broken link sorts first in one folder and last in the other: the
// result is the same, whatever order the folder lists its entries in.
TEST(TraceSetInputs, BrokenLinksInAFolderAreSkippedWhereverTheySort) {
  TempDir dir;
  for (const char* broken : {"aa.json", "zz.json"}) {
    const std::string folder = dir.file(std::string("run_") + broken);
    const std::string good = dir.write(folder.substr(dir.path().string().size() + 1) + "/rank0.json", good_doc());
    const std::string link = folder + "/" + broken;
    fs::create_symlink(dir.file("gone.json"), link);
    ExpandedInputs e = expand_input_files({folder});
    EXPECT_EQ(e.error, "");
    EXPECT_EQ(e.files, std::vector<std::string>{good});
    EXPECT_EQ(e.warnings,
              std::vector<std::string>{"skipped " + link + ": broken symbolic link (to " + dir.file("gone.json") + ")"});
  }
}

TEST(TraceSetInputs, ABrokenLinkNamedDirectlyIsAnError) {
  TempDir dir;
  const std::string link = dir.file("rank0.json");
  fs::create_symlink("elsewhere.json", link);
  LoadResult r = load_traces({link}, ReadOptions{});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, link + ": broken symbolic link (to elsewhere.json)");
}

TEST(TraceSetInputs, AGlobSkipsBrokenMatchesToo) {
  TempDir dir;
  const std::string good = dir.write("rank1.json", good_doc());
  const std::string link = dir.file("rank0.json");
  fs::create_symlink("gone.json", link);
  ExpandedInputs e = expand_input_files({dir.file("rank*.json")});
  EXPECT_EQ(e.files, std::vector<std::string>{good});
  EXPECT_EQ(e.warnings, std::vector<std::string>{"skipped " + link + ": broken symbolic link (to gone.json)"});
}

TEST(TraceSetInputs, ARankWithoutEventsIsDroppedAndAloneIsTheError) {
  TempDir dir;
  dir.write("run/rank0.json", good_doc());
  const std::string empty = dir.write("run/rank1.json", R"({"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "x"}}, {"ph": "C", "name": "c", "pid": 1, "ts": 1}]})");
  LoadResult r = load_traces({dir.file("run")}, ReadOptions{});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.set.ranks.size(), 1u);
  EXPECT_EQ(r.set.warnings,
            std::vector<std::string>{"dropped " + empty +
                                     ": no analysable event (no complete 'X' or instant 'i' event kept from "
                                     "traceEvents; 1 record of other phases ignored)"});
  r = load_traces({empty}, ReadOptions{});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, empty + ": no analysable event (no complete 'X' or instant 'i' event kept from traceEvents; "
                             "1 record of other phases ignored)");
}

}  // namespace
}  // namespace stepscope::trace
