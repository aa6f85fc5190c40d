// The Grafana dashboard in monitor/grafana/ must be valid JSON and chart only
// metrics the exporter really exports.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <regex>

#include "monitor/exporter.h"
#include "test_paths.h"
#include "trace/trace_fixtures.h"

namespace stepscope::monitor {
namespace {

void collect_exprs(const nlohmann::json& j, std::vector<std::string>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if ((it.key() == "expr" || it.key() == "definition") && it->is_string()) out.push_back(*it);
      collect_exprs(*it, out);
    }
  } else if (j.is_array()) {
    for (const auto& x : j) collect_exprs(x, out);
  }
}

TEST(GrafanaDashboard, EveryMetricItChartsIsExported) {
  std::string text = testing::read_file(testing::source_dir() + "/monitor/grafana/stepscope.json");
  nlohmann::json dash = nlohmann::json::parse(text);  // throws (fails) on invalid JSON
  ASSERT_TRUE(dash.contains("panels"));
  EXPECT_GE(dash["panels"].size(), 10u);
  std::vector<std::string> exprs;
  collect_exprs(dash, exprs);
  ASSERT_GE(exprs.size(), 20u);
  std::vector<std::string> exported = Exporter::metric_names();
  std::regex metric(R"(stepscope_[a-z0-9_]+)");
  std::set<std::string> used;
  for (const std::string& e : exprs)
    for (auto it = std::sregex_iterator(e.begin(), e.end(), metric); it != std::sregex_iterator(); ++it) {
      used.insert(it->str());
      EXPECT_NE(std::find(exported.begin(), exported.end(), it->str()), exported.end())
          << it->str() << " (in \"" << e << "\") is not exported";
    }
  // The headline numbers are all on the dashboard.
  for (const char* m : {"stepscope_train_loss", "stepscope_train_mfu_ratio", "stepscope_gpu_utilization_ratio",
                        "stepscope_gpu_memory_used_bytes", "stepscope_gpu_xid_errors_total"})
    EXPECT_TRUE(used.count(m)) << m;
}

}  // namespace
}  // namespace stepscope::monitor
