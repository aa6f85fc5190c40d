// The rule file `stepscope monitor rules` writes, checked and unit-tested by
// Prometheus' own promtool (Debian package `prometheus`; skipped without it).
#include "monitor/alert_rules.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "cli_run.h"

namespace stepscope::monitor {
namespace {

namespace fs = std::filesystem;
using testing::run_cli;
using testing::shell_quote;
using testing::TempDir;

bool have_promtool() { return std::system("command -v promtool >/dev/null 2>&1") == 0; }

std::string promtool_dir() { return testing::source_dir() + "/tests/monitor/promtool"; }

TEST(AlertRules, ExpressionsCarryTheTableThresholds) {
  for (const AlertRule& r : alert_rules()) {
    EXPECT_FALSE(r.expr().empty()) << r.name;
    EXPECT_EQ(r.name.rfind("Stepscope", 0), 0u);
  }
  EXPECT_EQ(alert_rules()[1].expr(), "stepscope_gpu_memory_used_bytes / stepscope_gpu_memory_total_bytes > 0.95");
  EXPECT_EQ(prometheus_duration(300), "5m");
  EXPECT_EQ(prometheus_duration(3600), "1h");
  EXPECT_EQ(prometheus_duration(90), "90s");
}

TEST(AlertRules, CliWritesTheRuleFile) {
  TempDir dir;
  auto r = run_cli(dir, {"monitor", "rules", "-o", dir.file("rules.yml")});
  ASSERT_EQ(r.exit_code, 0);
  std::string text = testing::read_file(dir.file("rules.yml"));
  EXPECT_EQ(text, alert_rules_yaml());
  for (const AlertRule& rule : alert_rules()) EXPECT_NE(text.find("- alert: " + rule.name + "\n"), std::string::npos);
  auto bad = run_cli(dir, {"monitor", "rules", "-o", dir.file("no/such/dir/rules.yml")});
  EXPECT_EQ(bad.exit_code, 2);
}

TEST(AlertRules, PromtoolChecksTheRuleFile) {
  if (!have_promtool()) GTEST_SKIP() << "promtool not on PATH (Debian package prometheus); rule checks skipped";
  TempDir dir;
  std::string rules = dir.write("stepscope_rules.yml", alert_rules_yaml());
  EXPECT_EQ(std::system(("promtool check rules " + shell_quote(rules) + " >/dev/null").c_str()), 0);
}

TEST(AlertRules, PromtoolUnitTestPerAlert) {
  if (!have_promtool()) GTEST_SKIP() << "promtool not on PATH (Debian package prometheus); rule unit tests skipped";
  TempDir dir;
  dir.write("stepscope_rules.yml", alert_rules_yaml());
  std::set<std::string> covered;
  int files = 0;
  for (const auto& entry : fs::directory_iterator(promtool_dir())) {
    if (entry.path().extension() != ".yml") continue;
    ++files;
    std::string text = testing::read_file(entry.path().string());
    for (const AlertRule& r : alert_rules())
      if (text.find("alertname: " + r.name + "\n") != std::string::npos) covered.insert(r.name);
    fs::copy_file(entry.path(), dir.path() / entry.path().filename());
    std::string cmd = "cd " + shell_quote(dir.path().string()) + " && promtool test rules " +
                      shell_quote(entry.path().filename().string()) + " > " + shell_quote(dir.file("out.txt")) + " 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << entry.path() << "\n" << testing::read_file(dir.file("out.txt"));
  }
  EXPECT_EQ(files, static_cast<int>(alert_rules().size()));
  for (const AlertRule& r : alert_rules()) EXPECT_TRUE(covered.count(r.name)) << r.name << " has no promtool test";
}

}  // namespace
}  // namespace stepscope::monitor
