// Every detector's per-rank parts (detector_part.h) merge associatively:
// merged as a tree of adjacent rank ranges, as a merge spread over workers
// does, they finish to the same findings as merged one rank after another,
// as analyze does, and so do parts written to their summary form (CBOR) and
// read back. On real multi-rank traces (PARAM's DLRM on 8 GPUs, HTA's
// two-rank trace_filter) and synthetic GPT ranks with NCCL buckets.
#include <gtest/gtest.h>

#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "analysis/multi_rank.h"
#include "diagnose/detector_registry.h"
#include "diagnose/rank_inputs.h"
#include "synthetic/rank_writer.h"
#include "test_paths.h"
#include "trace/trace_fixtures.h"
#include "trace/trace_set.h"

namespace stepscope::diagnose {
namespace {

using Parts = std::vector<std::unique_ptr<DetectorPart>>;

// Everything a finding says, as text.
std::string describe(const DetectorOutput& out) {
  std::ostringstream s;
  for (const Finding& f : out.findings) {
    s << f.detector << " | " << f.title << " | " << f.remedy << " | " << f.estimated_saving_us << " "
      << f.estimated_saving_pct << " r" << f.saving_rank << " remedies " << f.remedies.size() << "\n";
    for (const Metric& m : f.evidence.metrics) s << "  " << m.name << "=" << m.value << "\n";
    for (const Example& e : f.evidence.examples)
      s << "  ex r" << e.rank << " s" << e.step << " " << e.ts_ns << " " << e.name << " " << e.detail << "\n";
  }
  for (const NotAssessed& n : out.not_assessed) s << "na " << n.what << ": " << n.reason << "\n";
  return s.str();
}

// Parts [lo, hi) of one detector merged as a balanced tree of adjacent ranges.
std::unique_ptr<DetectorPart> tree_merge(std::vector<Parts>& ranks, size_t d, size_t lo, size_t hi) {
  if (hi - lo == 1) return std::move(ranks[lo][d]);
  const size_t mid = lo + (hi - lo) / 2;
  std::unique_ptr<DetectorPart> left = tree_merge(ranks, d, lo, mid);
  left->merge_from(*tree_merge(ranks, d, mid, hi));
  return left;
}

// A set read and analysed, and every detector's part of each rank.
struct Collected {
  trace::LoadResult loaded;
  DiagnoseOptions options;
  std::vector<analysis::RankAnalysis> analyses;
  analysis::MultiRankAnalysis multi;
  std::vector<Detector> detectors = default_detectors();

  explicit Collected(const std::string& folder) : loaded(trace::load_traces({folder}, trace::ReadOptions{})) {
    EXPECT_TRUE(loaded.ok) << loaded.error;
    for (const auto& st : loaded.set.ranks) analyses.push_back(analysis::analyze_rank(*st, options.analysis));
    std::vector<const analysis::RankAnalysis*> ap;
    for (const auto& a : analyses) ap.push_back(&a);
    multi = analysis::analyze_ranks(ap, options.analysis);
  }
  size_t ranks() const { return loaded.set.ranks.size(); }
  JobContext job() const { return {&multi, &options, ranks()}; }
  std::vector<Parts> parts() const {
    std::vector<Parts> out;
    for (size_t i = 0; i < ranks(); ++i) {
      const trace::EventStore& store = *loaded.set.ranks[i];
      const RankInputs in = prepare_rank(store, options);
      const RankAttribution attribution = attribute_rank(in, store, analyses[i]);
      const RankView v = view_of(in, attribution, store, analyses[i], options);
      out.push_back(collect_rank(detectors, std::vector<bool>(detectors.size(), true), v, options, ranks()));
    }
    return out;
  }
};

// Synthetic GPT ranks with NCCL buckets (tools/synthetic) in `dir`.
void write_synthetic(const testing::TempDir& dir, int ranks, int layers, int steps, uint64_t seed) {
  synth::SyntheticSpec spec;
  spec.ranks = ranks;
  spec.layers = layers;
  spec.steps = steps;
  spec.bucket_layers = 1;
  spec.seed = seed;
  for (int r = 0; r < ranks; ++r) {
    synth::RankFile f = synth::write_rank(spec, r, spec.steps, dir.path().string());
    ASSERT_TRUE(f.error.empty()) << f.error;
  }
}

void expect_tree_merge_equals_linear(const std::string& folder, size_t want_ranks) {
  const Collected c(folder);
  ASSERT_EQ(c.ranks(), want_ranks);
  const std::vector<Detector>& detectors = c.detectors;
  // Each rank's parts, twice: once for each way of merging.
  std::vector<Parts> linear = c.parts(), tree = c.parts();
  const JobContext job = c.job();
  size_t findings = 0;
  for (size_t d = 0; d < detectors.size(); ++d) {
    // Each rank's part also through its summary form (CBOR, as the summary
    // file holds it), then merged as the merge of summaries would.
    std::unique_ptr<DetectorPart> from_files;
    for (size_t i = 0; i < linear.size(); ++i) {
      const std::vector<uint8_t> bytes = nlohmann::json::to_cbor(linear[i][d]->save());
      std::unique_ptr<DetectorPart> back = detectors[d].load(nlohmann::json::from_cbor(bytes));
      if (from_files)
        from_files->merge_from(*back);
      else
        from_files = std::move(back);
    }
    std::unique_ptr<DetectorPart> one_by_one = std::move(linear[0][d]);
    for (size_t i = 1; i < linear.size(); ++i) one_by_one->merge_from(*linear[i][d]);
    const DetectorOutput a = detectors[d].finish(*one_by_one, job);
    const DetectorOutput b = detectors[d].finish(*tree_merge(tree, d, 0, tree.size()), job);
    EXPECT_EQ(describe(b), describe(a)) << detectors[d].name;
    // What only the rank's own trace can use (claims, remedies) stays behind.
    std::string want = describe(a);
    for (size_t at; (at = want.find(" remedies ")) != std::string::npos;) want.erase(at, want.find('\n', at) - at);
    std::string got = describe(detectors[d].finish(*from_files, job));
    for (size_t at; (at = got.find(" remedies ")) != std::string::npos;) got.erase(at, got.find('\n', at) - at);
    EXPECT_EQ(got, want) << detectors[d].name << " through summaries";
    findings += a.findings.size();
  }
  EXPECT_GT(findings, 0u) << "a set with nothing to find tests nothing";
}

TEST(DetectorParts, TreeMergeEqualsOneByOneOnHtaTraceFilter) {
  SKIP_WITHOUT_SHARED();
  expect_tree_merge_equals_linear(testing::shared_dir() + "/conformance/hta/trace_filter", 2);
}

TEST(DetectorParts, TreeMergeEqualsOneByOneOnParamDlrm) {
  SKIP_WITHOUT_SHARED();
  expect_tree_merge_equals_linear(testing::shared_dir() + "/conformance/param/dlrm_8rank", 8);
}

TEST(DetectorParts, TreeMergeEqualsOneByOneOnSyntheticRanks) {
  testing::TempDir dir;
  write_synthetic(dir, 12, 3, 3, 7);
  expect_tree_merge_equals_linear(dir.path().string(), 12);
}

TEST(DetectorParts, RenumberedPartsCarryTheNewRankAndBadFormsAreRefused) {
  testing::TempDir dir;
  write_synthetic(dir, 2, 2, 3, 3);
  const Collected c(dir.path().string());
  const std::vector<Detector>& detectors = c.detectors;
  std::vector<Parts> parts = c.parts();
  const JobContext job = c.job();
  size_t seen = 0;
  for (size_t d = 0; d < detectors.size(); ++d) {
    for (size_t i = 0; i < parts.size(); ++i) parts[i][d]->set_rank(100 + static_cast<int64_t>(i));
    parts[0][d]->merge_from(*parts[1][d]);
    for (const Finding& f : detectors[d].finish(*parts[0][d], job).findings) {
      ++seen;
      if (f.saving_rank >= 0) EXPECT_GE(f.saving_rank, 100) << f.title;
      for (const Example& e : f.evidence.examples)
        // Stragglers are the cross-rank table's (numbered by the merge), not a part's.
        if (!e.name.starts_with("straggler rank")) EXPECT_GE(e.rank, 100) << f.title << ": " << e.name;
    }
    // A form with a field missing or of the wrong type is an exception, not a part.
    nlohmann::json bad = parts[1][d]->save();
    ASSERT_TRUE(bad.is_object()) << detectors[d].name;
    bad.erase(bad.begin());
    EXPECT_THROW(detectors[d].load(bad), nlohmann::json::exception) << detectors[d].name;
    EXPECT_THROW(detectors[d].load(nlohmann::json::array({1, 2})), nlohmann::json::exception) << detectors[d].name;
  }
  EXPECT_GT(seen, 0u);
}

}  // namespace
}  // namespace stepscope::diagnose
