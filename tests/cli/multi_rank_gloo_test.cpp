// `stepscope analyze` on real 8-rank CPU traces (DDP over gloo, made by
// workloads/train_gpt_dist.py; meta.json beside them says how): with no
// communication kernel, collective skew comes from the host-side gloo ranges,
// and only the rank that was slowed on purpose is a straggler.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "test_paths.h"

namespace stepscope::cli {
namespace {

using nlohmann::json;
using testing::CliRun;
using testing::run_cli;

json analyze_json(const std::string& scenario) {
  testing::TempDir dir;
  const std::string folder = testing::test_data_dir() + "/dist_gloo_cpu/" + scenario;
  CliRun r = run_cli(dir, {"analyze", "--json", "-", folder});
  EXPECT_EQ(r.exit_code, 0) << (r.err_lines.empty() ? "" : r.err_lines.front());
  return json::parse(r.out);
}

TEST(MultiRankGloo, SlowedRankIsTheOnlyStraggler) {
  const json meta = json::parse(testing::read_file(testing::test_data_dir() + "/dist_gloo_cpu/straggler/meta.json"));
  const json j = analyze_json("straggler");
  ASSERT_EQ(j["ranks"].size(), 8u);
  const json& c = j["multi_rank"]["collective_skew"];
  EXPECT_EQ(c["source"], "host_ops");
  EXPECT_EQ(c["unmatched_calls"], 0);
  EXPECT_GE(c["matched_calls"].get<int>(), 6);  // a broadcast and an all-reduce per profiled step
  ASSERT_EQ(c["stragglers"].size(), 1u);
  EXPECT_EQ(c["stragglers"][0], meta["slow_rank"]);
  // The others wait for it about as long as it was held back (40 ms).
  const double late_us = c["ranks"][meta["slow_rank"].get<int>()]["mean_lateness_us"].get<double>();
  EXPECT_GT(late_us, 0.5 * meta["straggler_ms"].get<double>() * 1000);
  EXPECT_LT(late_us, 2.0 * meta["straggler_ms"].get<double>() * 1000);
}

TEST(MultiRankGloo, NoGpuBucketsForCpuOnlyTraces) {
  // The terminal report does not show a table of 100% "other idle" for a GPU
  // that was never traced; the JSON says why the buckets mean nothing.
  testing::TempDir dir;
  CliRun r = run_cli(dir, {"analyze", testing::test_data_dir() + "/dist_gloo_cpu/healthy"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Where step time went: not assessed: the traces have no GPU activity"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("other idle"), std::string::npos) << r.out;
  const json j = analyze_json("healthy");
  for (const json& rank : j["ranks"]) EXPECT_FALSE(rank["attribution"]["gpu_activity"].get<bool>());
}

TEST(MultiRankGloo, HealthyRunHasNoStraggler) {
  const json j = analyze_json("healthy");
  const json& c = j["multi_rank"]["collective_skew"];
  EXPECT_EQ(c["source"], "host_ops");
  EXPECT_GE(c["matched_calls"].get<int>(), 6);
  EXPECT_TRUE(c["stragglers"].empty()) << c.dump();
}

TEST(MultiRankGloo, JobReplayTiesTheRanksAtTheirAllReduces) {
  // docs/json_schema.md, JobReplay: the 8 ranks replayed as one job, tied at
  // the 3 all-reduces (8 arrival and 8 release edges each); the broadcasts
  // are rooted and stay untied.
  const json j = analyze_json("straggler");
  ASSERT_TRUE(j.contains("job_replay"));
  const json& r = j["job_replay"];
  EXPECT_EQ(r["ranks"], 8);
  EXPECT_TRUE(r["replayed"].get<bool>());
  EXPECT_EQ(r["collectives"], 3);
  EXPECT_EQ(r["collective_edges"], 48);
  EXPECT_EQ(r["unmatched_calls"], 0);
  EXPECT_EQ(r["steps"], 24);
  EXPECT_EQ(r["max_abs_error_pct"], 0.0);
  ASSERT_EQ(r["notes"].size(), 1u);
  EXPECT_NE(r["notes"][0].get<std::string>().find("3 matched calls of rooted or point-to-point operations"),
            std::string::npos);
}

TEST(MultiRankGloo, JobCriticalPathCrossesToTheSlowedRank) {
  // docs/json_schema.md, JobCriticalPath: rank 7 sleeps 40 ms before every
  // forward; the job's path spends most of its time on it and crosses to it
  // at an all-reduce where the others waited about that long.
  const json j = analyze_json("straggler");
  ASSERT_TRUE(j.contains("job_critical_path"));
  const json& p = j["job_critical_path"];
  ASSERT_EQ(p["steps"].size(), 3u);
  ASSERT_FALSE(p["by_rank_us"].empty());
  EXPECT_EQ(p["by_rank_us"][0]["rank"], 7);  // most time first
  EXPECT_GT(p["by_rank_us"][0]["us"].get<double>(), 0.5 * p["wall_us"].get<double>());
  double sum = 0;
  for (const auto& [k, v] : p["by_category_us"].items()) sum += v.get<double>();
  EXPECT_NEAR(sum, p["wall_us"].get<double>(), 0.01);
  bool to_slow = false;
  for (const json& s : p["steps"]) {
    EXPECT_EQ(s["crossing_count"].get<size_t>(), s["crossings"].size());
    for (const json& c : s["crossings"]) {
      EXPECT_EQ(c["collective"], "allreduce");
      if (c["to_rank"] != 7) continue;
      to_slow = true;
      EXPECT_GT(c["wait_us"].get<double>(), 20'000.0);
    }
  }
  EXPECT_TRUE(to_slow) << p.dump();
  testing::TempDir dir;
  CliRun r = run_cli(dir, {"analyze", testing::test_data_dir() + "/dist_gloo_cpu/straggler"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Job critical path (3 steps): 64% on rank 7"), std::string::npos) << r.out;
}

TEST(MultiRankGloo, OneRankHasNoJobReplay) {
  testing::TempDir dir;
  CliRun r = run_cli(dir, {"analyze", "--json", "-", testing::test_data_dir() + "/dist_gloo_cpu/healthy/rank0.json.gz"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_FALSE(json::parse(r.out).contains("job_replay"));
  EXPECT_FALSE(json::parse(r.out).contains("job_critical_path"));
  EXPECT_EQ(r.out.find("Job critical path"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::cli
