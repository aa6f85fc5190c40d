// A folder of rank files: which files are read, which rank each one is, and
// what a damaged rank does to the set (an error naming it; with salvage, the
// other ranks are analysed and a warning names it).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <thread>

#include "trace/trace_set.h"
#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

using testing::TempDir;
using testing::cpu_ops;
using testing::trace_doc;

std::string with_rank(int rank, int events = 5) {
  return trace_doc(cpu_ops(events), R"("distributedInfo": {"backend": "nccl", "rank": )" +
                                        std::to_string(rank) + R"(, "world_size": 2})");
}

std::string noise(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  s[0] = 'Z';  // not '{', '[' or a gzip magic byte
  return s;
}

TEST(RankFromFileName, Patterns) {
  EXPECT_EQ(rank_from_file_name("/x/rank-3.json.gz"), 3);
  EXPECT_EQ(rank_from_file_name("rank_12.pt.trace.json"), 12);
  EXPECT_EQ(rank_from_file_name("RANK7.json"), 7);
  EXPECT_EQ(rank_from_file_name("worker5_step_12.1694128201549.pt.trace.json.gz"), 5);
  EXPECT_EQ(rank_from_file_name("rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"), 34);
  EXPECT_EQ(rank_from_file_name("/data/rank9/trace.json"), -1);  // only the file name counts
  EXPECT_EQ(rank_from_file_name("trace.json"), -1);
  EXPECT_EQ(rank_from_file_name("ranking.json"), -1);
}

// The reader, the per-rank analyses and the CLI's allocator rule all count
// threads this way; 0 means one per core.
TEST(TraceSet, ReadingThreadsAreTheRequestOrTheCores) {
  EXPECT_EQ(reading_threads(3), 3u);
  EXPECT_EQ(reading_threads(1), 1u);
  EXPECT_EQ(reading_threads(0), std::max(1u, std::thread::hardware_concurrency()));
}

TEST(TraceSet, RankFromDistributedInfoThenFileNameThenOrder) {
  TempDir dir;
  dir.write("aaa.json", with_rank(0));                  // distributedInfo 0
  dir.write("dup.json", with_rank(0));                  // distributedInfo 0 again: taken
  dir.write("x_rank5.json", trace_doc(cpu_ops(5)));     // file name: 5
  dir.write("zzz.json", trace_doc(cpu_ops(5)));         // nothing: by order
  dir.write("rank-9.json", with_rank(2));               // distributedInfo beats the file name
  LoadResult r = load_traces({dir.path().string()}, ReadOptions{});
  ASSERT_TRUE(r.ok) << r.error;
  const auto& ranks = r.set.ranks;
  ASSERT_EQ(ranks.size(), 5u);
  auto name = [](const EventStore& s) { return std::filesystem::path(s.source_path).filename().string(); };
  // Sorted by rank. Unresolved files take the smallest free ranks in file order.
  EXPECT_EQ(ranks[0]->rank, 0);
  EXPECT_EQ(name(*ranks[0]), "aaa.json");
  EXPECT_EQ(ranks[0]->rank_source, "distributedInfo");
  EXPECT_EQ(ranks[1]->rank, 1);
  EXPECT_EQ(name(*ranks[1]), "dup.json");
  EXPECT_EQ(ranks[1]->rank_source, "order");
  EXPECT_EQ(ranks[2]->rank, 2);
  EXPECT_EQ(name(*ranks[2]), "rank-9.json");
  EXPECT_EQ(ranks[2]->rank_source, "distributedInfo");
  EXPECT_EQ(ranks[3]->rank, 3);
  EXPECT_EQ(name(*ranks[3]), "zzz.json");
  EXPECT_EQ(ranks[3]->rank_source, "order");
  EXPECT_EQ(ranks[4]->rank, 5);
  EXPECT_EQ(name(*ranks[4]), "x_rank5.json");
  EXPECT_EQ(ranks[4]->rank_source, "file name");
  ASSERT_EQ(r.set.warnings.size(), 1u);
  EXPECT_EQ(r.set.warnings[0], dir.file("dup.json") + ": rank 0 already taken by another file; numbered by order instead");
}

TEST(TraceSet, NonTraceJsonInAFolderIsSkippedWithANote) {
  TempDir dir;
  dir.write("rank0.json", with_rank(0));
  dir.write("hta_expected.json", R"({"steps": [1, 2]})");
  dir.write("list.json", "[1, 2]");
  dir.write("notes.txt", "not json at all");  // not even looked at
  LoadResult r = load_traces({dir.path().string()}, ReadOptions{});
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.set.ranks.size(), 1u);
  ASSERT_EQ(r.set.notes.size(), 2u);
  EXPECT_EQ(r.set.notes[0], "skipped " + dir.file("hta_expected.json") +
                                ": valid JSON but not a trace (no top-level \"traceEvents\")");
  EXPECT_EQ(r.set.notes[1], "skipped " + dir.file("list.json") +
                                ": valid JSON but not a trace (top-level array holds no trace events)");
  EXPECT_TRUE(r.set.warnings.empty());
}

TEST(TraceSet, CorruptRankFailsTheSetAndNamesTheFile) {
  TempDir dir;
  dir.write("rank0.json", with_rank(0));
  std::string bad = dir.write("rank1.json", noise(5000, 3));
  LoadResult r = load_traces({dir.path().string()}, ReadOptions{});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error.rfind(bad + ": ", 0), 0u) << r.error;
  EXPECT_EQ(r.error.find('\n'), std::string::npos);
}

TEST(TraceSet, SalvageAnalysesTheOtherRankAndWarnsAboutTheCorruptOne) {
  TempDir dir;
  dir.write("rank0.json", with_rank(0, 7));
  std::string bad = dir.write("rank1.json", noise(5000, 3));
  ReadOptions o;
  o.salvage = true;
  LoadResult r = load_traces({dir.path().string()}, o);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.set.ranks.size(), 1u);
  EXPECT_EQ(r.set.ranks[0]->rank, 0);
  EXPECT_EQ(r.set.ranks[0]->events.size(), 7u);
  ASSERT_EQ(r.set.warnings.size(), 1u);
  EXPECT_EQ(r.set.warnings[0].find("dropped " + bad + ": "), 0u) << r.set.warnings[0];
}

TEST(TraceSet, SalvageKeepsTheReadablePartOfATruncatedRank) {
  TempDir dir;
  dir.write("rank0.json", with_rank(0, 7));
  std::string full = with_rank(1, 100);
  std::string bad = dir.write("rank1.json", full.substr(0, full.find("aten::op60")));
  ReadOptions o;
  o.salvage = true;
  LoadResult r = load_traces({dir.path().string()}, o);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.set.ranks.size(), 2u);
  EXPECT_EQ(r.set.ranks[1]->rank, 1);
  EXPECT_EQ(r.set.ranks[1]->events.size(), 60u);
  ASSERT_EQ(r.set.warnings.size(), 1u);
  EXPECT_EQ(r.set.warnings[0].find("salvaged " + bad + ": "), 0u) << r.set.warnings[0];
}

TEST(TraceSet, SalvageWithNothingReadableIsStillAnError) {
  TempDir dir;
  std::string bad = dir.write("rank1.json", noise(100, 5));
  ReadOptions o;
  o.salvage = true;
  LoadResult r = load_traces({dir.path().string()}, o);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error.rfind(bad + ": ", 0), 0u) << r.error;
}

TEST(TraceSet, GlobAndExplicitFilesAreDeduplicated) {
  TempDir dir;
  std::string a = dir.write("rank0.json", with_rank(0));
  std::string b = dir.write("rank1.json", with_rank(1));
  std::string err;
  auto files = expand_inputs({dir.file("rank*.json"), a, b}, err);
  EXPECT_EQ(files, (std::vector<std::string>{a, b}));
  files = expand_inputs({dir.file("nothing*.json")}, err);
  EXPECT_TRUE(files.empty());
  EXPECT_EQ(err, dir.file("nothing*.json") + ": no file matches this pattern");
}

TEST(TraceSet, RealEightRankFolder) {
  SKIP_WITHOUT_SHARED();
  LoadResult r = load_traces({testing::shared_dir() + "/conformance/param/dlrm_8rank"}, ReadOptions{});
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.set.ranks.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(r.set.ranks[i]->rank, i);
    EXPECT_EQ(r.set.ranks[i]->rank_source, "distributedInfo");
    EXPECT_NE(r.set.ranks[i]->source_path.find("worker" + std::to_string(i) + "_"), std::string::npos);
    EXPECT_EQ(r.set.ranks[i]->meta.world_size, 8);
  }
  ASSERT_EQ(r.set.notes.size(), 1u);  // hta_expected.json
  EXPECT_NE(r.set.notes[0].find("hta_expected.json"), std::string::npos);
}

TEST(TraceSet, RealTraceWithoutRankUsesTheFileNameOrOrder) {
  SKIP_WITHOUT_SHARED();
  // distributedInfo present but without "rank"; the file name has none either.
  LoadResult r = load_traces({testing::shared_trace("conformance/hta/rank_unavailable")}, ReadOptions{});
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.set.ranks.size(), 1u);
  EXPECT_FALSE(r.set.ranks[0]->meta.rank.has_value());
  EXPECT_EQ(r.set.ranks[0]->meta.backend, "nccl");
  EXPECT_EQ(r.set.ranks[0]->rank, 0);
  EXPECT_EQ(r.set.ranks[0]->rank_source, "order");
  r = load_traces({testing::shared_trace("conformance/hta/distributed_info_unavailable")}, ReadOptions{});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(r.set.ranks[0]->meta.rank.has_value());
  EXPECT_EQ(r.set.ranks[0]->rank_source, "order");
  r = load_traces({testing::shared_trace("conformance/hta/cpu_only")}, ReadOptions{});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.set.ranks[0]->rank, 34);  // distributedInfo, and the name says rank-34 too
  EXPECT_EQ(r.set.ranks[0]->rank_source, "distributedInfo");
}

}  // namespace
}  // namespace stepscope::trace
