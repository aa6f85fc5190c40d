// What merge refuses, with the files named: summaries made with different
// settings, one trace in two summaries, a copy of a rank's summary, nothing
// but skipped files; and how ranks without a number are numbered (as analyze).
#include <gtest/gtest.h>

#include <functional>

#include "summary/summary_fixtures.h"
#include "summary/summary_json.h"
#include "test_paths.h"
#include "trace/trace_fixtures.h"

namespace stepscope::pipeline {
namespace {

using testing_support::summary_of;

std::string gloo(const std::string& f) { return testing::test_data_dir() + "/dist_gloo_cpu/straggler/" + f; }

TEST(MergeRefusal, DifferentSettings) {
  summary::SummarizeOptions top5;
  top5.analysis.top_kernels = 5;
  std::vector<NamedSummary> s = {summary_of(gloo("rank0.json.gz")), summary_of(gloo("rank1.json.gz"), top5)};
  MergedRun m = merge_summaries(std::move(s), {});
  EXPECT_FALSE(m.ok);
  EXPECT_NE(m.error.find("rank1.json.gz.stepscope-summary were summarized with different settings"), std::string::npos)
      << m.error;
}

TEST(MergeRefusal, AnotherToolVersion) {
  std::vector<NamedSummary> s = {summary_of(gloo("rank0.json.gz")), summary_of(gloo("rank1.json.gz"))};
  s[1].summary.tool_version = "0.0.9";
  MergedRun m = merge_summaries(std::move(s), {});
  EXPECT_FALSE(m.ok);
  EXPECT_EQ(m.error, gloo("rank1.json.gz") + ".stepscope-summary was summarized by stepscope 0.0.9; this is stepscope " +
                         report::kToolVersion + ": summarize the traces again with this version");
}

// A summary's detector parts must be those its settings enable, each loading:
// else the merge names the summary and the detector.
TEST(MergeRefusal, MissingOrBadDiagnosisParts) {
  auto with_parts = [](const std::function<void(nlohmann::json&)>& change) {
    std::vector<NamedSummary> s = {summary_of(gloo("rank0.json.gz")), summary_of(gloo("rank1.json.gz"))};
    nlohmann::json parts = summary::diagnosis_parts(s[1].summary);
    change(parts);
    s[1].summary.diagnosis = nlohmann::json::to_cbor(parts);
    return merge_summaries(std::move(s), {});
  };
  const std::string file = gloo("rank1.json.gz") + ".stepscope-summary";
  MergedRun m = with_parts([](nlohmann::json& p) { p.erase("host_sync"); });
  EXPECT_FALSE(m.ok);
  EXPECT_EQ(m.error, file + ": no diagnosis part of host_sync");
  EXPECT_EQ(m.error_file, file);
  m = with_parts([](nlohmann::json& p) { p["host_sync"].erase("saving"); });
  EXPECT_FALSE(m.ok);
  EXPECT_EQ(m.error.rfind(file + ": diagnosis part of host_sync: ", 0), 0u) << m.error;
  EXPECT_EQ(m.error.find('\n'), std::string::npos);
  // Bytes that are not CBOR (fuzz_summary's malformed_cbor_in_parts.cbor:
  // the parser's exception escaped the merge).
  std::vector<NamedSummary> s = {summary_of(gloo("rank0.json.gz")), summary_of(gloo("rank1.json.gz"))};
  s[1].summary.diagnosis = {0xa1, 0xb1};  // a map whose key is a map
  m = merge_summaries(std::move(s), {});
  EXPECT_FALSE(m.ok);
  EXPECT_EQ(m.error.rfind(file + ": diagnosis parts: parse error at byte 2", 0), 0u) << m.error;
}

TEST(MergeRefusal, OneTraceInTwoSummaries) {
  std::vector<NamedSummary> s = {summary_of(gloo("rank0.json.gz")), summary_of(gloo("rank0.json.gz"))};
  s[1].name = "again.stepscope-summary";
  MergedRun m = merge_summaries(std::move(s), {});
  EXPECT_FALSE(m.ok);
  EXPECT_NE(m.error.find("both summarize " + gloo("rank0.json.gz")), std::string::npos) << m.error;
}

TEST(MergeRefusal, CopyOfARanksTrace) {
  // The same trace under another name: one process, one time span.
  std::vector<NamedSummary> s = {summary_of(gloo("rank0.json.gz")), summary_of(gloo("rank0.json.gz"))};
  s[1].summary.files = {"/elsewhere/copy_of_rank0.json.gz"};
  s[1].name = "copy.stepscope-summary";
  MergedRun m = merge_summaries(std::move(s), {});
  EXPECT_FALSE(m.ok);
  EXPECT_NE(m.error.find("summarize the same rank's trace"), std::string::npos) << m.error;
  EXPECT_EQ(m.error_file, "copy.stepscope-summary");
}

TEST(MergeRefusal, NothingButSkippedFiles) {
  std::vector<NamedSummary> s = {summary_of(gloo("meta.json"))};
  MergedRun m = merge_summaries(std::move(s), {});
  EXPECT_FALSE(m.ok);
  EXPECT_NE(m.error.find("no rank to analyse among the 1 summaries: skipped"), std::string::npos) << m.error;
}

TEST(MergeNumbering, DeclaredRankTakenTwiceIsNumberedByOrderWithAWarning) {
  std::vector<NamedSummary> s = {summary_of(gloo("rank0.json.gz")), summary_of(gloo("rank1.json.gz"))};
  s[1].summary.declared_rank = 0;  // two ranks claiming 0: the later file by path is numbered by order
  MergedRun m = merge_summaries(std::move(s), {});
  ASSERT_TRUE(m.ok) << m.error;
  ASSERT_EQ(m.report.ranks.size(), 2u);
  EXPECT_EQ(m.report.ranks[1].origin.rank_source, "order");
  EXPECT_EQ(m.report.ranks[1].rank, 1);
  ASSERT_FALSE(m.report.warnings.empty());
  EXPECT_EQ(m.report.warnings[0], gloo("rank1.json.gz") + ": rank 0 already taken by another file; numbered by order instead");
}

TEST(MergeFiles, DamagedSummaryIsNamed) {
  testing::TempDir dir;
  const std::string bad = dir.write("r0.stepscope-summary", "not a summary");
  MergedRun m = merge_summary_files({dir.path().string()}, 1);
  EXPECT_FALSE(m.ok);
  EXPECT_EQ(m.error, bad + ": not a stepscope summary (no STPSCSUM header)");
  EXPECT_EQ(m.error_file, bad);
  EXPECT_FALSE(merge_summary_files({(dir.path() / "none*.stepscope-summary").string()}, 1).ok);
}

}  // namespace
}  // namespace stepscope::pipeline

namespace stepscope::pipeline {
namespace {

// One profiling window of process 42 at `t0` µs (trace/process_windows.h).
std::string window(int64_t t0, int step) {
  auto at = [&](int64_t us) { return std::to_string(t0 + us); };
  return stepscope::testing::trace_doc({
      R"({"name": "process_name", "ph": "M", "ts": 0, "pid": 42, "tid": 0, "args": {"name": "python"}})",
      stepscope::testing::x_event("user_annotation", "ProfilerStep#" + std::to_string(step), at(0), "100", "42", "42"),
      stepscope::testing::x_event("cuda_runtime", "cudaLaunchKernel", at(15), "5", "42", "42",
                                  R"("args": {"correlation": 1})"),
      stepscope::testing::x_event("kernel", "sm90_xmma_gemm_bf16", at(30), "50", "0", "7",
                                  R"("args": {"device": 0, "stream": 7, "correlation": 1})"),
  });
}

TEST(MergeWindows, WindowsSummarizedApartAreRefusedTogetherTheyEqualAnalyze) {
  testing::TempDir dir;
  const std::string a = dir.write("a.json", window(1000000, 5)), b = dir.write("b.json", window(2000000, 6));
  MergedRun apart = merge_summaries({testing_support::summary_of(a), testing_support::summary_of(b)}, {});
  EXPECT_FALSE(apart.ok);
  EXPECT_NE(apart.error.find("are profiling windows of one process: summarize their trace files together"),
            std::string::npos)
      << apart.error;
  // Together, as `stepscope summarize a.json b.json` does: one rank, as analyze reads the folder.
  summary::SummarizeResult both = summary::summarize_rank({a, b}, {});
  ASSERT_TRUE(both.ok) << both.error;
  EXPECT_EQ(both.summary.files, (std::vector<std::string>{a, b}));
  ASSERT_EQ(both.summary.notes.size(), 1u);  // "a.json and b.json are one process ..."
  std::vector<NamedSummary> one;
  one.push_back({"both.stepscope-summary", both.summary});
  EXPECT_EQ(testing_support::comparable_diagnosis(testing_support::merged(std::move(one)), true),
            testing_support::comparable_diagnosis(testing_support::analyzed(dir.path().string()), false));
}

}  // namespace
}  // namespace stepscope::pipeline
