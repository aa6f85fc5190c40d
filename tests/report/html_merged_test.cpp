// The HTML report of `stepscope merge` in headless Chromium: the script runs
// to the end without an error, the tables from the summaries are drawn, and
// the page says that the findings and the timeline need `analyze` instead of
// reading as a healthy run or an idle GPU.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "headless_browser.h"
#include "report/html_report.h"
#include "report_fixtures.h"
#include "summary/summary_fixtures.h"
#include "synthetic/rank_writer.h"
#include "trace/trace_fixtures.h"

namespace stepscope::report {
namespace {

TEST(HtmlMerged, SaysWhatSummariesLackAndDrawsTheRest) {
  const std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium not installed (scripts/install_deps.sh installs it)";
  stepscope::testing::TempDir traces;
  synth::SyntheticSpec spec;
  spec.ranks = 4;
  spec.layers = 2;
  spec.steps = 3;
  for (int r = 0; r < spec.ranks; ++r) ASSERT_TRUE(synth::write_rank(spec, r, spec.steps, traces.path().string()).error.empty());
  pipeline::MergedRun m = pipeline::merge_summaries(stepscope::testing_support::summaries_of(traces.path().string()), {"summaries/"});
  ASSERT_TRUE(m.ok) << m.error;
  ASSERT_EQ(m.report.summaries, static_cast<size_t>(spec.ranks));
  const auto dir = testing_support::scratch_dir("html_merged");
  const auto html = dir / "report.html", png = dir / "report.png";
  std::ofstream(html) << render_html(m.report);
  const std::string dom = render_in_browser(chromium, html, png);
  std::smatch s;
  ASSERT_TRUE(std::regex_search(dom, s, std::regex("<html[^>]*data-render=\"([a-z]+)\""))) << "the script did not run";
  EXPECT_EQ(s[1], "ok");
  ASSERT_TRUE(std::regex_search(dom, s, std::regex("<pre id=\"render-errors\"([^>]*)>([^<]*)</pre>")));
  EXPECT_EQ(s[2].str(), "") << "script errors:\n" << s[2];
  // Rendered paragraphs (the script's own text holds these words too, unrendered).
  const std::string p = "<p class=\"empty\">";
  // The diagnosis, merged from the summaries: findings (or the line saying none reaches the bar).
  EXPECT_TRUE(dom.find("class=\"finding ") != std::string::npos ||
              dom.find(p + "No finding reaches the reporting bar") != std::string::npos);
  EXPECT_NE(dom.find(p + "Merged from rank summaries, which do not carry the events a timeline is drawn from"),
            std::string::npos);
  EXPECT_EQ(dom.find(p + "The trace has no GPU activity."), std::string::npos);
  EXPECT_EQ(dom.find(p + "The diagnosis did not run for this report."), std::string::npos);
  // The per-rank kernel table comes from the summaries.
  const size_t kernels = dom.find("id=\"kernel-table\"");
  ASSERT_NE(kernels, std::string::npos);
  EXPECT_NE(dom.find("<table", kernels), std::string::npos);
}

}  // namespace
}  // namespace stepscope::report
