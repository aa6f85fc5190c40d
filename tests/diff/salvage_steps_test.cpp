// --salvage on a cut trace (analysis/salvage_cut.h): a cut inside the host or
// device records leaves no step provably whole, so analyze and diff stop
// with one error naming the file and the dropped steps instead of reporting
// a cut step as whole; a cut after the device records keeps every step, with
// the same attribution as the whole file.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "test_paths.h"
#include "trace/trace_fixtures.h"

namespace stepscope {
namespace {

using testing::CliRun;
using testing::joined;
using testing::run_cli;
using testing::TempDir;

std::string example_text() {
  return testing::gunzip_file(std::string(STEPSCOPE_SOURCE_DIR) + "/examples/eager_bf16_baseline/rank0.json.gz");
}

// `side`: "after: " for diff, "" for analyze.
void expect_nothing_whole(const CliRun& r, const std::string& path, const std::string& side = "") {
  EXPECT_EQ(r.exit_code, 2) << joined(r.err_lines);
  ASSERT_FALSE(r.err_lines.empty());
  const std::string& last = r.err_lines.back();
  EXPECT_EQ(last.rfind("stepscope: error: " + side + path + ": the file is cut ", 0), 0u) << last;
  EXPECT_NE(last.find("steps are dropped and nothing whole remains"), std::string::npos) << last;
}

TEST(SalvageSteps, CutAt90And50PercentLeavesNothingWhole) {
  TempDir dir;
  const std::string text = example_text();
  for (double frac : {0.9, 0.5}) {
    const std::string path = dir.write("cut" + std::to_string(static_cast<int>(frac * 100)) + ".json",
                                       text.substr(0, static_cast<size_t>(static_cast<double>(text.size()) * frac)));
    CliRun r = run_cli(dir, {"analyze", "--salvage", "-q", "--json", "-", path});
    expect_nothing_whole(r, path);
    EXPECT_NE(r.err_lines.back().find(frac > 0.6 ? "inside its device records" : "before its device records"),
              std::string::npos)
        << r.err_lines.back();
    EXPECT_TRUE(r.out.empty());  // no report built on cut steps
  }
}

TEST(SalvageSteps, CutAfterDeviceRecordsKeepsEveryStepAsWhole) {
  TempDir dir;
  const std::string text = example_text();
  const std::string whole = dir.write("whole.json", text);
  // Inside the trailer's "PyTorch Profiler (0)" span, written after every
  // kernel, copy, runtime call and gpu_user_annotation.
  const size_t trailer = text.rfind("\"cat\": \"Trace\"");
  ASSERT_NE(trailer, std::string::npos);
  const std::string cut = dir.write("cut.json", text.substr(0, trailer + 5));
  CliRun w = run_cli(dir, {"analyze", "-q", "--json", "-", whole});
  CliRun c = run_cli(dir, {"analyze", "--salvage", "-q", "--json", "-", cut});
  ASSERT_EQ(w.exit_code, 0) << joined(w.err_lines);
  ASSERT_EQ(c.exit_code, 0) << joined(c.err_lines);
  EXPECT_NE(joined(c.err_lines).find(cut + ": the file is cut after its device records: 0 steps dropped"),
            std::string::npos)
      << joined(c.err_lines);
  auto wj = nlohmann::json::parse(w.out)["ranks"][0];
  auto cj = nlohmann::json::parse(c.out)["ranks"][0];
  EXPECT_EQ(cj["salvage"]["cut_section"], "after_device");
  EXPECT_EQ(cj["salvage"]["steps_dropped_by_cut"], 0);
  EXPECT_FALSE(wj.contains("salvage"));  // whole files keep their schema
  const auto& ws = wj["attribution"]["steps"];
  const auto& cs = cj["attribution"]["steps"];
  ASSERT_EQ(cs.size(), ws.size());
  ASSERT_GT(cs.size(), 0u);
  for (size_t i = 0; i < cs.size(); ++i) {
    EXPECT_EQ(cs[i]["step"], ws[i]["step"]);
    EXPECT_EQ(cs[i]["wall_us"], ws[i]["wall_us"]);
    EXPECT_EQ(cs[i]["buckets"], ws[i]["buckets"]) << "step " << ws[i]["step"];
  }
}

TEST(SalvageSteps, DiffAgainstA90PercentCutStopsInsteadOfReportingLostCompute) {
  TempDir dir;
  const std::string text = example_text();
  const std::string whole = dir.write("whole.json", text);
  const std::string cut = dir.write("cut.json", text.substr(0, text.size() * 9 / 10));
  CliRun r = run_cli(dir, {"diff", "--salvage", whole, cut});
  expect_nothing_whole(r, cut, "after: ");

  const size_t trailer = text.rfind("\"cat\": \"Trace\"");
  const std::string late = dir.write("late.json", text.substr(0, trailer + 5));
  CliRun d = run_cli(dir, {"diff", "--salvage", "--json", "-", whole, late});
  ASSERT_EQ(d.exit_code, 0) << joined(d.err_lines);
  auto j = nlohmann::json::parse(d.out);
  // Every bucket of the step-time attribution is unchanged: no compute lost.
  EXPECT_EQ(j["before"]["steps"], j["after"]["steps"]);
  EXPECT_EQ(j["step_us"]["change"], 0.0);
  ASSERT_FALSE(j["attribution"].empty());
  for (const auto& b : j["attribution"]) EXPECT_EQ(b["us_per_step"]["change"], 0.0) << b.dump();
  EXPECT_EQ(j["compute_pct"]["change"], 0.0);
}

}  // namespace
}  // namespace stepscope
