// `merge` of per-rank summaries gives analyze's report: every analysis and
// cross-rank table and the diagnosis identical, on real multi-rank traces
// (DDP over gloo, PARAM's DLRM on 8 GPUs, HTA's two-rank trace_filter) and
// on synthetic sets of 8, 64 and 1,024 ranks; in any order of the summaries.
// Less what the merge says it does not make from summaries (each rank's step
// graph stays with its trace; docs/distributed.md, "What the merge gives
// today"): the combined saving, load_imbalance's replay saving, the job
// replay and job critical path; and the detectors' run times.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <random>

#include "summary/summary_fixtures.h"
#include "synthetic/rank_writer.h"
#include "test_paths.h"
#include "trace/trace_fixtures.h"

namespace stepscope {
namespace {

using testing_support::analyzed;
using testing_support::merged;
using testing_support::summaries_of;

using json = nlohmann::ordered_json;
using testing_support::comparable_diagnosis;

void expect_merge_equals_analyze(const std::string& folder, size_t ranks) {
  const json a = comparable_diagnosis(analyzed(folder), false);
  ASSERT_EQ(a["ranks"].size(), ranks);
  std::vector<pipeline::NamedSummary> s = summaries_of(folder);
  // Summaries arrive in whatever order the workers finish.
  std::shuffle(s.begin(), s.end(), std::mt19937(42));
  const json m = comparable_diagnosis(merged(std::move(s)), true);
  ASSERT_EQ(m["ranks"].size(), ranks);
  // The diagnosis and the per-rank parts of it, for a readable failure.
  for (auto it = a["diagnosis"].begin(); it != a["diagnosis"].end(); ++it)
    EXPECT_EQ(m["diagnosis"].value(it.key(), json()), it.value()) << "diagnosis." << it.key();
  for (size_t r = 0; r < ranks; ++r)
    for (const char* k : {"attribution", "replay", "critical_path"})
      EXPECT_EQ(m["ranks"][r].value(k, json()), a["ranks"][r].value(k, json())) << "rank " << r << " " << k;
  // Key by key first, for a readable failure; then the whole.
  for (auto it = a.begin(); it != a.end(); ++it) EXPECT_EQ(m.value(it.key(), nlohmann::ordered_json()), it.value()) << it.key();
  EXPECT_EQ(m, a);
  if (ranks >= 2) EXPECT_FALSE(m["multi_rank"].is_null());
}

TEST(MergeEquality, GlooStragglerSet) {
  expect_merge_equals_analyze(testing::test_data_dir() + "/dist_gloo_cpu/straggler", 8);
}

TEST(MergeEquality, GlooHealthySet) {
  expect_merge_equals_analyze(testing::test_data_dir() + "/dist_gloo_cpu/healthy", 8);
}

TEST(MergeEquality, ParamDlrm8Ranks) {
  SKIP_WITHOUT_SHARED();
  expect_merge_equals_analyze(testing::shared_dir() + "/conformance/param/dlrm_8rank", 8);
}

TEST(MergeEquality, HtaTraceFilterTwoRanks) {
  SKIP_WITHOUT_SHARED();
  expect_merge_equals_analyze(testing::shared_dir() + "/conformance/hta/trace_filter", 2);
}

// Synthetic GPT steps with NCCL all-reduce buckets on every rank (tools/synthetic).
void expect_synthetic(int ranks, int layers, int steps) {
  testing::TempDir dir;
  synth::SyntheticSpec spec;
  spec.ranks = ranks;
  spec.layers = layers;
  spec.steps = steps;
  spec.bucket_layers = 1;
  spec.seed = static_cast<uint64_t>(ranks);
  for (int r = 0; r < ranks; ++r) {
    synth::RankFile f = synth::write_rank(spec, r, spec.steps, dir.path().string());
    ASSERT_TRUE(f.error.empty()) << f.error;
  }
  expect_merge_equals_analyze(dir.path().string(), static_cast<size_t>(ranks));
}

// Traces that record no world size: the communication part of a rank
// depends on the set size its summary was told (--ranks-in-set), as analyze
// takes the number of ranks it read; told, the merge equals analyze, else it
// says which ranks' collectives it could not judge as analyze does.
TEST(MergeEquality, SetSizeOfTracesWithoutAWorldSize) {
  testing::TempDir dir;
  synth::SyntheticSpec spec;
  spec.ranks = 4;
  spec.layers = 2;
  spec.steps = 3;
  spec.bucket_layers = 1;
  spec.gzip_level = 0;  // plain JSON, edited below
  for (int r = 0; r < spec.ranks; ++r) {
    synth::RankFile f = synth::write_rank(spec, r, spec.steps, dir.path().string());
    ASSERT_TRUE(f.error.empty()) << f.error;
    std::ifstream in(f.path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (size_t at = text.find("\"world_size\""); at != std::string::npos; at = text.find("\"world_size\"", at))
      text.replace(at, 12, "\"world_sizX\"");
    ASSERT_NE(text.find("\"world_sizX\""), std::string::npos) << f.path;
    std::ofstream(f.path, std::ios::trunc) << text;
  }
  const json a = comparable_diagnosis(analyzed(dir.path().string()), false);
  ASSERT_EQ(a["ranks"].size(), 4u);
  summary::SummarizeOptions told;
  told.ranks_in_set = 4;
  std::vector<pipeline::NamedSummary> s;
  std::string error;
  for (const std::string& f : trace::expand_inputs({dir.path().string()}, error)) s.push_back(testing_support::summary_of(f, told));
  EXPECT_EQ(comparable_diagnosis(merged(std::move(s)), true), a);
  // Not told: the merge names the ranks whose collectives it judged apart.
  const json m = merged(summaries_of(dir.path().string()));
  bool noted = false;
  for (const json& n : m["diagnosis"]["not_assessed"])
    noted = noted || (n["detector"] == "communication" &&
                      n["reason"].get<std::string>().find("--ranks-in-set 4") != std::string::npos);
  EXPECT_TRUE(noted) << m["diagnosis"]["not_assessed"].dump();
}

TEST(MergeEquality, Synthetic8Ranks) { expect_synthetic(8, 4, 4); }
TEST(MergeEquality, Synthetic64Ranks) { expect_synthetic(64, 2, 2); }
TEST(MergeEquality, Synthetic1024Ranks) { expect_synthetic(1024, 1, 1); }

}  // namespace
}  // namespace stepscope
