// The critical path in the reports: the JSON's per-step categories that sum
// to the step's wall time and its named longest segments, the HTML view's
// path row and stream marks that add up to the path, and the terminal's one
// line per rank.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "report/diagnosis_terminal.h"
#include "report/html_view.h"
#include "report/json_report.h"
#include "report/perfetto_report.h"
#include "report/report_fixtures.h"

namespace stepscope::report {
namespace {

using nlohmann::json;
using testing_support::example_trace;
using testing_support::report_of;
using testing_support::scratch_dir;

TEST(CriticalPathJson, EachStepSumsToItsWallAndNamesItsLongestSegments) {
  if (!std::filesystem::exists(example_trace("eager_bf16_baseline"))) GTEST_SKIP() << "examples/ not found";
  auto rep = report_of({example_trace("eager_bf16_baseline")});
  const json j = json::parse(build_analyze_json(rep->report).dump());
  const json& cp = j["ranks"][0]["critical_path"];
  const json& replay = j["ranks"][0]["replay"]["steps"];
  ASSERT_EQ(cp["steps"].size(), 3u);
  ASSERT_EQ(cp["steps"].size(), replay.size());
  EXPECT_TRUE(cp["notes"].empty());
  for (size_t i = 0; i < cp["steps"].size(); ++i) {
    const json& s = cp["steps"][i];
    EXPECT_EQ(s["step"], replay[i]["step"]);
    const double wall = s["wall_us"].get<double>();
    EXPECT_DOUBLE_EQ(wall, replay[i]["replayed_us"].get<double>());
    ASSERT_EQ(s["by_category"].size(), static_cast<size_t>(whatif::kPathCategoryCount));
    double sum = 0, share = 0;
    for (const auto& [k, v] : s["by_category"].items()) {
      sum += v.get<double>();
      share += s["share_pct"][k].get<double>();
    }
    EXPECT_NEAR(sum, wall, 1e-6 * wall);
    EXPECT_NEAR(share, 100.0, 1e-9);
    // Steps 2 and 3 are paced partly by the host (Python between launches)
    // and partly by the kernels queued before the step-closing sync; in
    // step 4 the GPU is done before the host reaches its sync (29% idle):
    // the host paces all of it.
    const double host = s["share_pct"]["host_other"].get<double>() + s["share_pct"]["host_runtime"].get<double>();
    if (s["step"] != 4) {
      EXPECT_GT(s["share_pct"]["gpu_compute"].get<double>(), 50.0);
      EXPECT_GT(host, 20.0);
    } else {
      EXPECT_GT(host, 99.0);
    }
    const json& top = s["top_segments"];
    ASSERT_EQ(top.size(), whatif::kTopPathSegments);
    for (size_t k = 0; k < top.size(); ++k) {
      EXPECT_FALSE(top[k]["name"].get<std::string>().empty());
      EXPECT_GE(top[k]["start_us"].get<double>(), s["start_us"].get<double>());
      if (k > 0) {
        EXPECT_LE(top[k]["dur_us"].get<double>(), top[k - 1]["dur_us"].get<double>());
      }
    }
  }
}

TEST(CriticalPathHtml, PathRowAndStreamMarksAddUpToThePath) {
  for (const std::string name : {"eager_bf16_baseline", "dataloader_stall"}) {
    if (!std::filesystem::exists(example_trace(name))) GTEST_SKIP() << "examples/ not found";
    auto rep = report_of({example_trace(name)});
    HtmlViewOptions o;
    const json view = json::parse(build_html_view(rep->report, o).dump());
    const double width_ns = view["axis"]["duration_us"].get<double>() * 1000.0 / o.timeline_columns;
    ASSERT_EQ(view["path_categories"].size(), static_cast<size_t>(whatif::kPathCategoryCount));
    const whatif::RankCriticalPath& cp = rep->report.diagnosis->critical_path[0];
    const json& rank = view["timeline"][0];
    ASSERT_TRUE(rank["critical_path"].is_array()) << name;
    // Per category: the columns' ‰ times the column width is the path's time.
    std::vector<double> by_cat(whatif::kPathCategoryCount, 0.0);
    size_t columns = rank["critical_path"].size();
    for (const auto& c : rank["critical_path"])
      for (size_t k = 1; k < c.size(); ++k) by_cat[k - 1] += c[k].get<double>() / 1000.0 * width_ns;
    const double tolerance = static_cast<double>(columns) * 0.001 * width_ns + 1.0;
    for (int k = 0; k < whatif::kPathCategoryCount; ++k)
      EXPECT_NEAR(by_cat[static_cast<size_t>(k)], static_cast<double>(cp.total_ns[static_cast<size_t>(k)]), tolerance)
          << name << " " << whatif::to_string(static_cast<whatif::PathCategory>(k));
    // Per stream: the marks add up to that stream's GPU work on the path.
    double marked = 0, on_gpu = 0;
    for (const auto& lane : rank["lanes"])
      for (const auto& c : lane["path"]) marked += c[1].get<double>() / 1000.0 * width_ns;
    for (const auto& s : cp.steps)
      for (const auto& span : s.spans)
        if (span.device >= 0) on_gpu += static_cast<double>(span.end_ns - span.start_ns);
    EXPECT_GT(on_gpu, 0) << name;
    EXPECT_NEAR(marked, on_gpu, tolerance) << name;
  }
}

TEST(CriticalPathTerminal, OneLinePerRankWithTheLargestShares) {
  if (!std::filesystem::exists(example_trace("host_bound_tiny"))) GTEST_SKIP() << "examples/ not found";
  auto rep = report_of({example_trace("host_bound_tiny")});
  const std::string text = render_diagnosis_terminal(*rep->report.diagnosis, {.max_findings = 10, .max_side_by_side = 8});
  EXPECT_NE(text.find("\n  critical path, rank 0: 100% host CPU\n"), std::string::npos) << text;
}

// The Perfetto export: per rank a "critical path" track, one slice per step
// and inside it the path's runs, which add up to the step.
TEST(CriticalPathPerfetto, OneTrackPerRankWhoseSlicesTileEachStep) {
  if (!std::filesystem::exists(example_trace("dataloader_stall"))) GTEST_SKIP() << "examples/ not found";
  auto rep = report_of({example_trace("dataloader_stall")});
  const auto path = scratch_dir("perfetto_critical_path") / "t.json";
  PerfettoResult r = write_perfetto(rep->report, path.string());
  ASSERT_TRUE(r.ok) << r.error;
  std::ifstream in(path);
  const json j = json::parse(in);
  const whatif::RankCriticalPath& cp = rep->report.diagnosis->critical_path[0];
  std::vector<double> step_us, spans_us(cp.steps.size(), 0.0);
  bool named = false;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "critical path · rank 0") named = true;
    if (!e.contains("cat") || e["cat"] != "stepscope.critical_path") continue;
    if (e["name"].get<std::string>().starts_with("step ")) {
      step_us.push_back(e["dur"].get<double>());
      EXPECT_TRUE(e["args"].contains("dataloader_us"));
    } else {
      ASSERT_FALSE(step_us.empty());
      spans_us[step_us.size() - 1] += e["dur"].get<double>();
    }
  }
  EXPECT_TRUE(named);
  ASSERT_EQ(step_us.size(), cp.steps.size());
  for (size_t i = 0; i < step_us.size(); ++i) {
    EXPECT_NEAR(step_us[i], static_cast<double>(cp.steps[i].wall_ns()) / 1e3, 1e-3);
    EXPECT_NEAR(spans_us[i], step_us[i], 1e-3 * static_cast<double>(cp.steps[i].spans.size()));
  }
}

}  // namespace
}  // namespace stepscope::report
