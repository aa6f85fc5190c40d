// The CLI on bad input: the built binary must end with exactly one stderr
// line naming the file and a non-zero exit; --salvage turns a damaged file
// into exit 0 plus a warning line naming it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "test_paths.h"
#include "trace/trace_fixtures.h"

namespace stepscope::cli {
namespace {

using testing::TempDir;

using testing::CliRun;
using testing::joined;
using testing::run_cli;

// Exit != 0 and one stderr line "stepscope: error: <file>: ...".
void expect_one_line_error(const CliRun& r, const std::string& file) {
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.exit_code, 128) << "killed by a signal";
  ASSERT_EQ(r.err_lines.size(), 1u) << joined(r.err_lines);
  EXPECT_EQ(r.err_lines[0].rfind("stepscope: error: " + file + ": ", 0), 0u) << r.err_lines[0];
  EXPECT_TRUE(r.out.empty()) << r.out;
}

std::string noise(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  s[0] = 'Z';
  return s;
}

std::string truncated_doc() {
  std::string doc = testing::trace_doc(testing::cpu_ops(100));
  return doc.substr(0, doc.find("aten::op50"));
}

TEST(CliBadInput, TruncatedPlainFile) {
  TempDir dir;
  std::string cut = truncated_doc();
  std::string path = dir.write("rank0.json", cut);
  CliRun r = run_cli(dir, {"analyze", path});
  expect_one_line_error(r, path);
  EXPECT_NE(r.err_lines[0].find("at byte " + std::to_string(cut.size())), std::string::npos);
}

TEST(CliBadInput, TruncatedPlainFileWithSalvage) {
  TempDir dir;
  std::string path = dir.write("rank0.json", truncated_doc());
  CliRun r = run_cli(dir, {"analyze", "--salvage", path});
  EXPECT_EQ(r.exit_code, 0) << joined(r.err_lines);
  ASSERT_EQ(r.err_lines.size(), 1u) << joined(r.err_lines);
  EXPECT_EQ(r.err_lines[0].rfind("stepscope: warning: salvaged " + path + ": ", 0), 0u) << r.err_lines[0];
}

// An unescaped quote in one record of the middle: an error naming the record
// without --salvage; with it, exit 0, one warning naming the file and the
// damaged record's offset, and the JSON report keeps the 99 other events.
TEST(CliBadInput, DamagedRecordInTheMiddleWithSalvage) {
  TempDir dir;
  std::vector<std::string> ev = testing::cpu_ops(100);
  ev[40] = testing::x_event("cpu_op", "aten::op\"40", "1400", "5");
  const std::string doc = testing::trace_doc(ev);
  const size_t damaged = doc.rfind('{', doc.find("op\"40"));
  std::string path = dir.write("rank0.json", doc);

  CliRun r = run_cli(dir, {"analyze", path});
  expect_one_line_error(r, path);
  EXPECT_NE(r.err_lines[0].find("record that starts at byte " + std::to_string(damaged)), std::string::npos)
      << r.err_lines[0];

  r = run_cli(dir, {"analyze", "--salvage", "-q", "--json", "-", path});
  EXPECT_EQ(r.exit_code, 0) << joined(r.err_lines);
  ASSERT_EQ(r.err_lines.size(), 1u) << joined(r.err_lines);
  EXPECT_EQ(r.err_lines[0], "stepscope: warning: " + path + ": 1 malformed record skipped (first at byte " +
                                std::to_string(damaged) +
                                ") (1 of them a damaged stretch read past to the next whole record)");
  const auto json = nlohmann::json::parse(r.out);
  const auto& imp = json["ranks"][0]["import"];
  EXPECT_EQ(imp["events"], 99);
  EXPECT_EQ(imp["skipped_records"], 1);
  EXPECT_EQ(imp["counters"]["damaged_record_skipped"], 1);
}

TEST(CliBadInput, TruncatedGzipBothDecoders) {
  TempDir dir;
  std::string gz = testing::gzip(testing::trace_doc(testing::cpu_ops(3000)));
  std::string path = dir.write("rank0.json.gz", gz.substr(0, gz.size() / 2));
  for (const char* backend : {"isal", "zlib"}) {
    CliRun r = run_cli(dir, {"analyze", "--gzip", backend, path});
    expect_one_line_error(r, path);
    EXPECT_NE(r.err_lines[0].find("truncated gzip"), std::string::npos) << r.err_lines[0];
  }
}

TEST(CliBadInput, RandomBytesEmptyFileAndNonTraces) {
  TempDir dir;
  for (auto [name, bytes] : std::vector<std::pair<std::string, std::string>>{
           {"noise.json", noise(10000, 11)},
           {"empty.json", ""},
           {"object.json", R"({"a": 1})"},
           {"array.json", "[1, 2]"},
           {"deep.json", std::string(200000, '[')},
       }) {
    std::string path = dir.write(name, bytes);
    CliRun r = run_cli(dir, {"analyze", path});
    SCOPED_TRACE(name);
    expect_one_line_error(r, path);
  }
}

TEST(CliBadInput, EmptyFolderAndMissingFile) {
  TempDir dir;
  std::string folder = dir.file("traces");
  std::filesystem::create_directory(folder);
  CliRun r = run_cli(dir, {"analyze", folder});
  expect_one_line_error(r, folder);
  r = run_cli(dir, {"analyze", dir.file("missing.json")});
  expect_one_line_error(r, dir.file("missing.json"));
}

TEST(CliBadInput, FolderWithOneCorruptRank) {
  TempDir dir;
  std::string folder = dir.file("run");
  dir.write("run/rank0.json", testing::trace_doc(testing::cpu_ops(5), R"("distributedInfo": {"rank": 0})"));
  std::string bad = dir.write("run/rank1.json", noise(4000, 2));
  CliRun r = run_cli(dir, {"analyze", folder});
  expect_one_line_error(r, bad);

  r = run_cli(dir, {"analyze", "--salvage", folder});
  EXPECT_EQ(r.exit_code, 0) << joined(r.err_lines);
  ASSERT_EQ(r.err_lines.size(), 1u) << joined(r.err_lines);
  EXPECT_EQ(r.err_lines[0].rfind("stepscope: warning: dropped " + bad + ": ", 0), 0u) << r.err_lines[0];
}

// The last four bytes of a gzip file claim the uncompressed size; in a cut
// file they are arbitrary. Claiming 4 GiB must not make the reader reserve
// gigabytes and die of std::bad_alloc under an address-space limit (ulimit -v,
// common on shared clusters). Sanitizer builds reserve terabytes of shadow
// memory up front, so the limit cannot be applied there.
#if defined(__SANITIZE_ADDRESS__)
#define STEPSCOPE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STEPSCOPE_ASAN 1
#endif
#endif
TEST(CliBadInput, TruncatedGzipClaimingHugeSizeUnderAddressSpaceLimit) {
#ifdef STEPSCOPE_ASAN
  GTEST_SKIP() << "ulimit -v cannot be combined with AddressSanitizer";
#endif
  TempDir dir;
  std::string gz = testing::gzip(testing::trace_doc(testing::cpu_ops(3000)));
  std::string cut = gz.substr(0, gz.size() / 2);
  cut.replace(cut.size() - 4, 4, "\xf0\xff\xff\xff");  // ISIZE = 4294967280
  std::string path = dir.write("rank0.json.gz", cut);
  CliRun r = run_cli(dir, {"analyze", path}, "ulimit -v 3000000; ");
  expect_one_line_error(r, path);
  EXPECT_EQ(r.exit_code, 2);
  r = run_cli(dir, {"analyze", "--salvage", path}, "ulimit -v 3000000; ");
  EXPECT_EQ(r.exit_code, 0) << joined(r.err_lines);
}

TEST(CliBadInput, GoodTraceExitsZeroWithoutStderr) {
  TempDir dir;
  std::string path = dir.write("rank0.json.gz", testing::gzip(testing::trace_doc(testing::cpu_ops(5))));
  CliRun r = run_cli(dir, {"analyze", path});
  EXPECT_EQ(r.exit_code, 0) << joined(r.err_lines);
  EXPECT_TRUE(r.err_lines.empty()) << joined(r.err_lines);
  EXPECT_FALSE(r.out.empty());
}

}  // namespace
}  // namespace stepscope::cli
