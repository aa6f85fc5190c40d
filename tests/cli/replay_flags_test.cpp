// The replay's two knobs on the command line: --unprofiled-step-ms
// calibrates the run without the profiler to a measured step, and
// --no-replay skips the replay, leaving the detectors' bounds as savings.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "test_paths.h"
#include "trace/trace_fixtures.h"

namespace stepscope::cli {
namespace {

using nlohmann::json;
using testing::CliRun;
using testing::run_cli;

// `analyze --json - EXTRA... INPUT` (an example's folder by default).
json analyze_json(const std::vector<std::string>& extra,
                  const std::string& input = testing::source_dir() + "/examples/item_sync") {
  testing::TempDir dir;
  std::vector<std::string> args = {"analyze", "--json", "-"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(input);
  CliRun r = run_cli(dir, args);
  EXPECT_EQ(r.exit_code, 0) << (r.err_lines.empty() ? "" : r.err_lines.front());
  return json::parse(r.out);
}

std::string tiny() { return testing::source_dir() + "/examples/host_bound_tiny"; }

TEST(ReplayFlags, UnprofiledStepMsCalibratesTheRunWithoutTheProfiler) {
  const json plain = analyze_json({});
  const json& p = plain["ranks"][0]["replay"]["unprofiled"];
  ASSERT_TRUE(p["estimated"].get<bool>());
  EXPECT_FALSE(p["calibrated"].get<bool>());
  // A measurement between the model's estimate and the profiled step.
  const double est_ms = p["estimated_unprofiled_step_us"].get<double>() / 1e3;
  const double prof_ms = p["profiled_step_us"].get<double>() / 1e3;
  ASSERT_LT(est_ms, prof_ms);
  const double measured = 0.5 * (est_ms + prof_ms);
  const json cal = analyze_json({"--unprofiled-step-ms", std::to_string(measured)});
  const json& c = cal["ranks"][0]["replay"]["unprofiled"];
  EXPECT_TRUE(c["calibrated"].get<bool>());
  EXPECT_NEAR(c["estimated_unprofiled_step_us"].get<double>() / 1e3, measured, 0.01 * measured);
  EXPECT_LT(c["cost_scale"].get<double>(), 1.0);  // less profiler cost than the model's
}

TEST(ReplayFlags, NoReplayKeepsTheBoundsAndSaysSo) {
  const json with = analyze_json({});
  const json without = analyze_json({"--no-replay"});
  EXPECT_EQ(with["diagnosis"]["primary_bottleneck"], "host_sync");
  EXPECT_EQ(without["diagnosis"]["primary_bottleneck"], "host_sync");
  const json& f = without["diagnosis"]["findings"][0];
  EXPECT_EQ(f["saving_basis"], "bound");
  EXPECT_EQ(f["estimated_saving_us"], f["bound_saving_us"]);
  EXPECT_EQ(with["diagnosis"]["findings"][0]["saving_basis"], "replay");
  const json& replay = without["ranks"][0]["replay"];
  EXPECT_FALSE(replay["replayed"].get<bool>());
  ASSERT_FALSE(replay["notes"].empty());
  EXPECT_NE(replay["notes"][0].get<std::string>().find("--no-replay"), std::string::npos);
}

TEST(ReplayFlags, AnUnprofiledStepThatIsNotANumberIsRefused) {
  testing::TempDir dir;
  CliRun r = run_cli(dir, {"analyze", "--unprofiled-step-ms", "fast", testing::source_dir() + "/examples/item_sync"});
  EXPECT_NE(r.exit_code, 0);
  ASSERT_FALSE(r.err_lines.empty());
  EXPECT_NE(r.err_lines.front().find("unprofiled-step-ms"), std::string::npos) << r.err_lines.front();
}


// --what-if replays the named findings' remedies together: on the for-loop
// AdamW of host_bound_tiny, launch overhead and the optimizer together save
// more than either alone and less than the step, and never their sum.
TEST(ReplayFlags, WhatIfReplaysTheNamedFixesTogether) {
  const json j = analyze_json({"--what-if", "host_overhead,unfused_optimizer"}, tiny());
  const json& w = j["diagnosis"]["what_if"];
  ASSERT_TRUE(w.is_object());
  EXPECT_EQ(w["categories"], json({"host_overhead", "unfused_optimizer"}));
  EXPECT_TRUE(w["not_found"].empty());
  double alone_max = 0, sum = 0;
  for (const auto& f : j["diagnosis"]["findings"])
    if (f["category"] == "host_overhead" || f["category"] == "unfused_optimizer") {
      alone_max = std::max(alone_max, f["estimated_saving_us"].get<double>());
      sum += f["estimated_saving_us"].get<double>();
    }
  const double both = w["saving_us"].get<double>();
  EXPECT_GT(both, alone_max);
  EXPECT_LT(both, sum);
  EXPECT_LT(w["saving_pct"].get<double>(), 100.0);
  // A name given twice counts once; not asked: null.
  const json twice = analyze_json({"--what-if", "host_overhead,unfused_optimizer,host_overhead"}, tiny());
  EXPECT_EQ(twice["diagnosis"]["what_if"]["categories"], w["categories"]);
  EXPECT_EQ(twice["diagnosis"]["what_if"]["saving_us"], w["saving_us"]);
  EXPECT_TRUE(analyze_json({}, tiny())["diagnosis"]["what_if"].is_null());
}

TEST(ReplayFlags, WhatIfNamesWhatItDidNotFindAndRefusesUnknownNames) {
  const json w = analyze_json({"--what-if", "host_sync"}, tiny())["diagnosis"]["what_if"];
  EXPECT_EQ(w["not_found"], json({"host_sync"}));
  EXPECT_TRUE(w["saving_us"].is_null());
  testing::TempDir dir;
  CliRun bad = run_cli(dir, {"analyze", "--what-if", "host_overhed", tiny()});
  EXPECT_NE(bad.exit_code, 0);
  ASSERT_FALSE(bad.err_lines.empty());
  EXPECT_NE(bad.err_lines.front().find("host_overhed"), std::string::npos) << bad.err_lines.front();
}


// Bad input for the replay: a trace whose steps cannot be replayed (here
// the ProfilerStep#N markers are renamed away) keeps each finding's bound
// as its saving, says so, and has no combined saving; never a crash.
TEST(ReplayFlags, WithoutReplayableStepsSavingsFallBackToTheBound) {
  testing::TempDir dir;
  std::string text = testing::gunzip_file(testing::source_dir() + "/examples/item_sync/rank0.json.gz");
  for (size_t at = text.find("ProfilerStep#"); at != std::string::npos; at = text.find("ProfilerStep#", at))
    text.replace(at, 13, "TrainingStep#");
  const json j = analyze_json({}, dir.write("rank0.json", text));
  const json& d = j["diagnosis"];
  ASSERT_FALSE(d["findings"].empty());
  for (const auto& f : d["findings"])
    if (f["saves_time"].get<bool>()) {
      EXPECT_EQ(f["saving_basis"], "bound") << f["category"];
      EXPECT_EQ(f["estimated_saving_us"], f["bound_saving_us"]) << f["category"];
    }
  EXPECT_EQ(d["combined_saving_rank"], -1);
  EXPECT_FALSE(j["ranks"][0]["replay"]["unprofiled"]["estimated"].get<bool>());
  EXPECT_FALSE(j["ranks"][0]["replay"]["notes"].empty());
}

}  // namespace
}  // namespace stepscope::cli
