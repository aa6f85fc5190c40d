// AtomicOutput and FileSink: an output file appears whole under its name or
// not at all; nothing temporary is left beside it either way.
#include "report/atomic_output.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <filesystem>

#include "report/file_sink.h"
#include "trace/trace_fixtures.h"

namespace stepscope::report {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::vector<std::string> names_in(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(folder)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(AtomicOutput, TheFileAppearsOnlyAtCommit) {
  TempDir dir;
  const std::string path = dir.file("out.json");
  AtomicOutput out = AtomicOutput::open(path);
  ASSERT_TRUE(out.ok()) << out.error();
  EXPECT_FALSE(fs::exists(path));  // a hidden temporary file until then
  ASSERT_EQ(names_in(dir.path()).size(), 1u);
  EXPECT_EQ(names_in(dir.path())[0].rfind(".out.json.", 0), 0u);
  EXPECT_TRUE(out.write("{}\n"));
  EXPECT_TRUE(out.commit()) << out.error();
  EXPECT_EQ(testing::read_file(path), "{}\n");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"out.json"});
}

TEST(AtomicOutput, DroppedUnfinishedLeavesTheOldFile) {
  TempDir dir;
  const std::string path = dir.write("out.json", "old");
  {
    AtomicOutput out = AtomicOutput::open(path);
    ASSERT_TRUE(out.ok());
    out.write("half of a new repo");
  }  // destroyed without commit
  EXPECT_EQ(testing::read_file(path), "old");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"out.json"});
}

TEST(AtomicOutput, ReplacingAFileKeepsItsPermissions) {
  TempDir dir;
  const std::string path = dir.write("out.json", "old");
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  AtomicOutput out = AtomicOutput::open(path);
  out.write("new");
  ASSERT_TRUE(out.commit());
  EXPECT_EQ(fs::status(path).permissions(), fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

TEST(AtomicOutput, BadPathsFailAtOpenNamingThePath) {
  TempDir dir;
  AtomicOutput missing = AtomicOutput::open(dir.file("nope/out.json"));
  EXPECT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(), dir.file("nope/out.json") + ": cannot write: No such file or directory");
  AtomicOutput folder = AtomicOutput::open(dir.path().string());
  EXPECT_FALSE(folder.ok());
  EXPECT_EQ(folder.error(), dir.path().string() + ": cannot write: is a folder");
  EXPECT_TRUE(names_in(dir.path()).empty());
}

// A device or FIFO cannot be renamed over: it is written in place.
TEST(AtomicOutput, DevicesAreWrittenInPlace) {
  AtomicOutput out = AtomicOutput::open("/dev/null");
  ASSERT_TRUE(out.ok()) << out.error();
  EXPECT_TRUE(out.write("x"));
  EXPECT_TRUE(out.commit());
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  if (fs::exists("/dev/full")) {
    AtomicOutput full = AtomicOutput::open("/dev/full");
    full.write(std::string(1 << 16, 'x'));
    EXPECT_FALSE(full.commit());
    EXPECT_EQ(full.error(), "/dev/full: cannot write: No space left on device");
  }
}

// A link to a file: the file it points to is replaced, the link stays.
TEST(AtomicOutput, LinksAreFollowed) {
  TempDir dir;
  const std::string target = dir.write("real.json", "old");
  const std::string link = dir.file("link.json");
  fs::create_symlink(target, link);
  AtomicOutput out = AtomicOutput::open(link);
  out.write("new");
  ASSERT_TRUE(out.commit()) << out.error();
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(testing::read_file(target), "new");
  EXPECT_EQ(names_in(dir.path()), (std::vector<std::string>{"link.json", "real.json"}));
}

// A write that fails part-way (the file-size limit: EFBIG, as ENOSPC on a
// full disk) is reported and removes the temporary file; plain and gzip.
TEST(AtomicOutput, FileSinkFailingPartWayLeavesNothing) {
  TempDir dir;
  struct rlimit old {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  auto previous = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 64 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string text;
  for (int i = 0; i < 200000; ++i) text += std::to_string(i * 7919) + ",";  // ~1.3 MB, compresses to >64 KiB
  std::vector<std::pair<std::string, std::string>> errors;
  for (const char* name : {"trace.json", "trace.json.gz"}) {
    const std::string path = dir.file(name);
    FileSink sink(path);
    sink.write(text);
    const bool ok = sink.close();
    errors.emplace_back(ok ? "" : sink.error(), path);
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, previous);
  for (const auto& [error, path] : errors) EXPECT_EQ(error, path + ": cannot write: File too large");
  EXPECT_TRUE(names_in(dir.path()).empty());
}

TEST(AtomicOutput, FileSinkWithoutCloseDiscards) {
  TempDir dir;
  {
    FileSink sink(dir.file("x.json"));
    sink.write("[");
  }
  EXPECT_TRUE(names_in(dir.path()).empty());
}

}  // namespace
}  // namespace stepscope::report
