// `diff --fail-if`: conditions parse or are refused with a reason, and the
// gate holds on the bundled example pairs where the change says it should.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cli_run.h"
#include "diff/diff_fixtures.h"
#include "diff/regression_gate.h"

namespace stepscope::diff {
namespace {

using testing_support::diff_examples;

GateCondition parsed(const std::string& text) {
  std::string error;
  auto c = parse_gate_condition(text, error);
  EXPECT_TRUE(c) << text << ": " << error;
  return c.value_or(GateCondition{});
}

std::string refusal(const std::string& text) {
  std::string error;
  EXPECT_FALSE(parse_gate_condition(text, error)) << text;
  return error;
}

TEST(GateCondition, ParsesFiguresUnitsAndSigns) {
  GateCondition c = parsed("step_time>+5%");
  EXPECT_EQ(c.figure, "step_time");
  EXPECT_TRUE(c.greater);
  EXPECT_EQ(c.unit, GateCondition::Unit::kPercent);
  EXPECT_EQ(c.threshold, 5.0);
  c = parsed("step_time>2.5ms");
  EXPECT_EQ(c.unit, GateCondition::Unit::kMs);
  EXPECT_EQ(c.threshold, 2.5);
  c = parsed("effective_compute<-5pp");
  EXPECT_FALSE(c.greater);
  EXPECT_EQ(c.unit, GateCondition::Unit::kPoints);
  EXPECT_EQ(c.threshold, -5.0);
  c = parsed("host_overhead>+1ms");
  EXPECT_EQ(c.figure, "host_overhead");
  c = parsed("new_finding>=medium");
  EXPECT_EQ(c.severity, diagnose::Severity::kMedium);
}

TEST(GateCondition, RefusesWhatItCannotMeanWithAReason) {
  EXPECT_NE(refusal("step_time").find("expected FIGURE>VALUE"), std::string::npos);
  EXPECT_NE(refusal("steptime>+5%").find("unknown figure 'steptime'"), std::string::npos);
  EXPECT_NE(refusal("step_time>+5").find("needs a unit"), std::string::npos);
  EXPECT_NE(refusal("step_time>+five%").find("not a number"), std::string::npos);
  EXPECT_NE(refusal("effective_compute<-5ms").find("a share"), std::string::npos);
  EXPECT_NE(refusal("step_time>+5pp").find("a time"), std::string::npos);
  EXPECT_NE(refusal("new_finding>medium").find(">=medium"), std::string::npos);
  EXPECT_NE(refusal("new_finding>=severe").find(">=low"), std::string::npos);
  EXPECT_NE(refusal("step_time>=5%").find("use > or <"), std::string::npos);
  EXPECT_FALSE(refusal("step_time>nan%").empty());
}

// The per-parameter AdamW loop against the fused baseline: slower steps and
// a new unfused_optimizer finding; the other way round, a faster run.
TEST(Gate, HoldsOnARegressionAndNotOnTheFix) {
  const DiffResult worse = diff_examples("eager_bf16_baseline", "foreach_off_adamw");
  ASSERT_GT(worse.step_us.change_pct, 5.0);
  std::vector<GateCondition> gate = {parsed("step_time>+5%"), parsed("new_finding>=medium")};
  GateVerdict v = evaluate_gate(worse, gate);
  EXPECT_TRUE(v.failed);
  ASSERT_GE(v.crossed.size(), 2u) << v.line;
  EXPECT_EQ(v.crossed[0].rfind("step_time +", 0), 0u) << v.crossed[0];
  EXPECT_NE(v.line.find("new finding unfused_optimizer"), std::string::npos) << v.line;
  EXPECT_EQ(v.line.rfind("FAIL: ", 0), 0u);

  const DiffResult better = diff_examples("foreach_off_adamw", "eager_bf16_baseline");
  v = evaluate_gate(better, gate);
  EXPECT_FALSE(v.failed) << v.line;
  EXPECT_EQ(v.line, "pass: none of 2 conditions holds");
  // A threshold the fix itself crosses: the step time fell by more than 5%.
  v = evaluate_gate(better, {parsed("step_time<-5%")});
  EXPECT_TRUE(v.failed);
}

TEST(Gate, CliExitsOneWithTheVerdictAndTwoOnABadCondition) {
  stepscope::testing::TempDir dir;
  const std::string ex = stepscope::testing::source_dir() + "/examples/";
  auto r = stepscope::testing::run_cli(
      dir, {"diff", ex + "eager_bf16_baseline", ex + "foreach_off_adamw", "-q", "--fail-if", "step_time>+5%",
            "--json", dir.file("d.json")});
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_FALSE(r.err_lines.empty());
  EXPECT_EQ(r.err_lines.back().rfind("stepscope: verdict: FAIL: step_time +", 0), 0u) << r.err_lines.back();
  const auto j = nlohmann::json::parse(stepscope::testing::read_file(dir.file("d.json")));
  EXPECT_EQ(j["gate"]["failed"], true);
  EXPECT_EQ(j["gate"]["conditions"][0], "step_time>+5%");

  r = stepscope::testing::run_cli(
      dir, {"diff", ex + "foreach_off_adamw", ex + "eager_bf16_baseline", "-q", "--fail-if", "step_time>+5%"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err_lines.back(), "stepscope: verdict: pass: none of 1 condition holds");

  r = stepscope::testing::run_cli(dir, {"diff", ex + "nope", ex + "eager_bf16_baseline", "--fail-if", "step_tim>1%"});
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(r.err_lines.size(), 1u);
  EXPECT_NE(r.err_lines[0].find("--fail-if 'step_tim>1%': unknown figure"), std::string::npos) << r.err_lines[0];
}

}  // namespace
}  // namespace stepscope::diff
