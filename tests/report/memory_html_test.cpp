// `stepscope memory --html`: the page holds the JSON report, text from the
// snapshot (a frame's file or function name) cannot end the data's <script>
// element, and a headless Chromium renders the page without script errors,
// with the chart drawn and the OOM listed.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "diagnose/snapshot_findings.h"
#include "memory/join_fixtures.h"
#include "memory/snapshot_report.h"
#include "report/headless_browser.h"
#include "report/memory_html.h"
#include "report/report_fixtures.h"
#include "test_paths.h"
#include "trace/snapshot/snapshot_reader.h"

namespace stepscope::report {
namespace {

using testing_support::scratch_dir;

std::unique_ptr<trace::snapshot::MemorySnapshot> snapshot(const std::string& name) {
  auto r = trace::snapshot::read_memory_snapshot(stepscope::testing::test_data_dir() + "/snapshots/" + name);
  EXPECT_TRUE(r.snapshot) << r.error;
  return std::move(r.snapshot);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(MemoryHtml, NamesFromTheSnapshotCannotEndTheScript) {
  auto s = snapshot("fragmented_p4.pickle");
  const std::string evil = "</script><script>alert(1)</script>";
  for (auto& f : s->frames.filename) f = s->strings.intern(evil);
  const std::string page = render_memory_html(memory::build_memory_report(*s, "evil<b>.pickle"));
  EXPECT_EQ(count(page, "</script>"), 3u);  // the page's own three script elements
  EXPECT_EQ(page.find("alert(1)</script>"), std::string::npos);
  EXPECT_NE(page.find("\\u003c/script>"), std::string::npos);  // the name is there, escaped
  EXPECT_EQ(page.find("evil<b>"), std::string::npos);
  EXPECT_NE(page.find("stepscope memory: evil&lt;b&gt;.pickle"), std::string::npos);
}

class MemoryHtmlInBrowser : public ::testing::TestWithParam<std::string> {};

TEST_P(MemoryHtmlInBrowser, RendersWithoutScriptErrors) {
  const std::string chromium = find_chromium();
  if (chromium.empty())
    GTEST_SKIP() << "chromium not installed (scripts/install_deps.sh installs it): the page is not rendered";
  const auto s = snapshot(GetParam());
  const auto rep = memory::build_memory_report(*s, GetParam());
  const auto findings = diagnose::snapshot_findings(rep, {});
  std::string name = GetParam();
  for (char& c : name)
    if (c == '/' || c == '.') c = '_';
  const auto dir = scratch_dir("memory_html_" + name);
  const auto html = dir / "memory.html", png = dir / "memory.png";
  std::ofstream(html) << render_memory_html(rep, findings);
  const std::string dom = render_in_browser(chromium, html, png);
  ASSERT_FALSE(dom.empty()) << "chromium printed no DOM";
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("<html[^>]*data-render=\"([a-z]+)\""))) << "the script did not run";
  EXPECT_EQ(m[1], "ok");
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("<pre id=\"render-errors\"([^>]*)>([^<]*)</pre>")));
  EXPECT_EQ(m[2].str(), "") << "script errors:\n" << m[2];
  EXPECT_EQ(count(dom, "<canvas"), rep.devices.size());  // one chart per device
  size_t ooms = 0;
  for (const auto& d : rep.devices) ooms += d.ooms.size();
  EXPECT_EQ(count(dom, "class=\"oom\""), ooms);
  EXPECT_EQ(count(dom, "class=\"finding "), findings.size());  // one card per finding
  EXPECT_NE(dom.find("At the peak of allocated memory"), std::string::npos);
}

TEST(MemoryHtmlJoined, TheStepsAndOpsOfAJoinedTraceAreListed) {
  using namespace stepscope::memory::join_fixtures;
  const std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium not installed: the page is not rendered";
  const auto s = snapshot("snapshot_p4.pickle");
  const auto store = analysis::testing_support::load_inline(trace_events(true), kHeader);
  const auto rep = memory::build_memory_report(*s, "snapshot_p4.pickle", 20, 20, store.get(), "rank0.json");
  const auto dir = scratch_dir("memory_html_joined");
  const auto html = dir / "memory.html", png = dir / "memory.png";
  std::ofstream(html) << render_memory_html(rep);
  const std::string dom = render_in_browser(chromium, html, png);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("<html[^>]*data-render=\"([a-z]+)\""))) << "the script did not run";
  EXPECT_EQ(m[1], "ok");
  EXPECT_NE(dom.find("Joined with the trace"), std::string::npos);
  EXPECT_NE(dom.find("clocks aligned by 4 allocations"), std::string::npos);
  EXPECT_NE(dom.find("aten::mm"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Snapshots, MemoryHtmlInBrowser,
                         ::testing::Values("fragmented_p4.pickle", "paged_oom_p4.pickle", "snapshot_v21_p2.pickle",
                                           "public/ZidongLiu_DeComFL__memory.pickle.gz"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n = p.param.substr(p.param.rfind('/') + 1);
                           n = n.substr(0, n.find('.'));
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace stepscope::report
