// --html output: one self-contained page whose embedded data is the JSON
// report plus drawing data that agrees with the analyses, safe against any
// text a trace can hold, and which a headless Chromium renders without a
// script error (skipped with a message where Chromium is not installed).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "analysis/counter_range_fixtures.h"
#include "cli_run.h"
#include "report/headless_browser.h"
#include "report/html_report.h"
#include "report/terminal_text.h"
#include "report/json_report.h"
#include "report/report_fixtures.h"
#include "trace/store_builder.h"

namespace stepscope::report {
namespace {

using nlohmann::json;
using testing_support::example_trace;
using testing_support::report_of;
using testing_support::scratch_dir;

// The JSON inside <script id="stepscope-data" type="application/json">.
json embedded_data(const std::string& page) {
  const std::string open = "<script id=\"stepscope-data\" type=\"application/json\">";
  size_t a = page.find(open);
  EXPECT_NE(a, std::string::npos);
  if (a == std::string::npos) return {};
  a += open.size();
  size_t b = page.find("</script>", a);
  EXPECT_NE(b, std::string::npos);
  return json::parse(page.substr(a, b - a));
}

TEST(HtmlReport, SelfContainedPageCarryingTheJsonReport) {
  if (!std::filesystem::exists(example_trace("dataloader_stall"))) GTEST_SKIP() << "examples/ not found";
  auto rep = report_of({example_trace("dataloader_stall")});
  const std::string page = render_html(rep->report);
  // Nothing is fetched: no external script, style, image or font.
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("src=\"http"), std::string::npos);
  EXPECT_EQ(page.find("url(http"), std::string::npos);
  EXPECT_EQ(page.find("@import"), std::string::npos);
  // Every template marker was filled.
  EXPECT_FALSE(std::regex_search(page, std::regex("@[A-Z_]+@"))) << "unfilled template marker";

  json data = embedded_data(page);
  // The report part is exactly what --json writes.
  EXPECT_EQ(data["report"], json::parse(build_analyze_json(rep->report).dump()));
  EXPECT_EQ(data["report"]["diagnosis"]["primary_bottleneck"], "data_pipeline");
  EXPECT_FALSE(data["report"]["diagnosis"]["findings"].empty());
  EXPECT_FALSE(data["report"]["ranks"][0]["attribution"]["steps"].empty());
}

// The timeline columns are a downsampling of the GPU work, not new numbers:
// per stream, the busy time they add up to matches the union of the
// stream's activities (idle breakdown) within the rounding of 1‰ per column.
TEST(HtmlReport, TimelineColumnsAddUpToEachStreamsBusyTime) {
  for (const std::string name : {"dataloader_stall", "eager_bf16_baseline"}) {
    if (!std::filesystem::exists(example_trace(name))) GTEST_SKIP() << "examples/ not found";
    auto rep = report_of({example_trace(name)});
    HtmlViewOptions o;
    json view = json::parse(build_html_view(rep->report, o).dump());
    const double width_us = view["axis"]["duration_us"].get<double>() / o.timeline_columns;
    const auto& idle = rep->report.ranks[0].idle.streams;
    const auto& lanes = view["timeline"][0]["lanes"];
    ASSERT_EQ(lanes.size(), idle.size()) << name;
    for (size_t i = 0; i < lanes.size(); ++i) {
      ASSERT_EQ(lanes[i]["stream"].get<int64_t>(), idle[i].stream);
      EXPECT_EQ(lanes[i]["activities"].get<int64_t>(), idle[i].activities);
      double busy_us = 0;
      size_t columns = 0;
      for (const auto& c : lanes[i]["cols"]) {
        ++columns;
        for (size_t k = 1; k < c.size(); ++k) busy_us += c[k].get<double>() / 1000.0 * width_us;
      }
      const double expected_us = static_cast<double>(idle[i].busy_ns) / 1000.0;
      // Rounding: at most 0.5‰ per class per column, plus the 1‰ given to
      // any non-zero sliver so it stays visible.
      const double tolerance = static_cast<double>(columns) * 4 * 0.001 * width_us + 1e-6;
      EXPECT_NEAR(busy_us, expected_us, tolerance) << name << " stream " << idle[i].stream;
    }
    // Allocator samples: the chart's largest value is the analysis' peak.
    for (const auto& dev : rep->report.ranks[0].memory.devices) {
      int64_t peak = 0;
      for (const auto& s : view["memory"])
        if (s["device_type"] == dev.device_type && s["device_id"] == dev.device_id) {
          if (!s["initial"].is_null()) peak = std::max(peak, s["initial"][0].get<int64_t>());
          for (const auto& c : s["cols"]) peak = std::max(peak, c[1].get<int64_t>());
        }
      EXPECT_EQ(peak, dev.peak_allocated_bytes) << name << " device " << dev.device_type << "/" << dev.device_id;
    }
  }
}

// The CPU lanes: the busiest host threads (at most 4), each column's runtime
// calls and other ops within the column, and the main thread's busy time the
// union of its ops' and calls' spans (computed here by a sort of its own).
TEST(HtmlReport, CpuLanesAddUpToEachThreadsBusyTime) {
  const std::string name = "host_bound_tiny";
  if (!std::filesystem::exists(example_trace(name))) GTEST_SKIP() << "examples/ not found";
  auto rep = report_of({example_trace(name)});
  HtmlViewOptions o;
  json view = json::parse(build_html_view(rep->report, o).dump());
  const double width_us = view["axis"]["duration_us"].get<double>() / o.timeline_columns;
  const auto& cpu = view["timeline"][0]["cpu_lanes"];
  ASSERT_GE(cpu.size(), 1u);
  ASSERT_LE(cpu.size(), 4u);
  const trace::EventStore& s = *rep->report.stores[0];
  for (const auto& lane : cpu) {
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (size_t r = 0; r < s.events.size(); ++r)
      if ((s.events.kind[r] == trace::EventKind::kCpuOp || s.events.kind[r] == trace::EventKind::kRuntime) &&
          s.events.pid[r] == lane["pid"].get<int32_t>() && s.events.tid[r] == lane["tid"].get<int64_t>())
        spans.emplace_back(s.events.ts_ns[r], s.events.ts_ns[r] + s.events.dur_ns[r]);
    std::sort(spans.begin(), spans.end());
    int64_t union_ns = 0, until = INT64_MIN;
    for (const auto& [a, b] : spans) {
      if (b > std::max(a, until)) union_ns += b - std::max(a, until);
      until = std::max(until, b);
    }
    double busy_us = 0;
    size_t columns = 0;
    for (const auto& c : lane["cols"]) {
      ++columns;
      EXPECT_LE(c[1].get<int>() + c[2].get<int>(), 1002) << "column " << c[0];
      busy_us += (c[1].get<double>() + c[2].get<double>()) / 1000.0 * width_us;
    }
    // Calls outside any op count in both unions (the lane shows the larger);
    // rounding as for the GPU lanes.
    const double tolerance = static_cast<double>(columns) * 2 * 0.001 * width_us + 0.01 * union_ns / 1000.0;
    EXPECT_NEAR(busy_us, static_cast<double>(union_ns) / 1000.0, tolerance) << "thread " << lane["tid"];
  }
}

// Text from the trace cannot end the data element or the page early.
TEST(HtmlReport, KernelNamesCannotBreakOutOfTheDataElement) {
  trace::EventStore store;
  {
    trace::StoreBuilder b(store);
    trace::EventRow k;
    k.ts_ns = 1000;
    k.dur_ns = 5000;
    k.name = b.intern("evil</script><script>document.title='pwned'</script><!-- @DATA@");
    k.category = b.intern("kernel");
    k.kind = trace::EventKind::kKernel;
    k.stream = 7;
    k.tid = 7;
    b.add_event(k);
    b.finish();
  }
  AnalyzeReport r;
  r.stores = {&store};
  r.ranks = {analysis::analyze_rank(store, {})};
  const std::string page = render_html(r);
  EXPECT_EQ(page.find("<script>document.title='pwned'"), std::string::npos);
  EXPECT_EQ(page.find("<!-- @DATA@"), std::string::npos);
  json data = embedded_data(page);
  EXPECT_EQ(data["report"]["ranks"][0]["top_kernels"][0]["name"],
            "evil</script><script>document.title='pwned'</script><!-- @DATA@");
}

// ------------------------------------------------------------ in a browser

class HtmlInBrowser : public ::testing::TestWithParam<std::string> {};

TEST_P(HtmlInBrowser, RendersWithoutScriptErrors) {
  const std::string chromium = find_chromium();
  if (chromium.empty())
    GTEST_SKIP() << "chromium not installed (scripts/install_deps.sh installs it): the page is not rendered";
  std::vector<std::string> inputs;
  std::string name = GetParam();
  if (name == "dlrm_8rank") {
    SKIP_WITHOUT_SHARED();
    inputs = {stepscope::testing::shared_dir() + "/conformance/param/dlrm_8rank"};
  } else {
    if (!std::filesystem::exists(example_trace(name))) GTEST_SKIP() << "examples/ not found";
    inputs = {example_trace(name)};
  }
  auto rep = report_of(inputs);
  const auto dir = scratch_dir("html_" + name);
  const auto html = dir / "report.html", png = dir / "report.png";
  std::ofstream(html) << render_html(rep->report);
  const std::string dom = render_in_browser(chromium, html, png);
  ASSERT_FALSE(dom.empty()) << "chromium printed no DOM";

  // The script finished: data-render="ok" on <html>, no recorded error.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("<html[^>]*data-render=\"([a-z]+)\""))) << "the report script did not run";
  EXPECT_EQ(m[1], "ok");
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("<pre id=\"render-errors\"([^>]*)>([^<]*)</pre>")));
  EXPECT_NE(m[1].str().find("hidden"), std::string::npos) << m[2];
  EXPECT_EQ(m[2].str(), "") << "script errors:\n" << m[2];

  // The charts were drawn and the findings listed.
  auto count = [&](const std::string& pattern) {
    const std::regex re(pattern);
    return std::distance(std::sregex_iterator(dom.begin(), dom.end(), re), std::sregex_iterator());
  };
  auto inside = [&](const std::string& id) {
    size_t a = dom.find("id=\"" + id + "\"");
    EXPECT_NE(a, std::string::npos) << id;
    size_t b = dom.find("</section>", a);
    return a == std::string::npos ? std::string() : dom.substr(a, b - a);
  };
  EXPECT_NE(inside("attribution-chart").find("<canvas"), std::string::npos);
  EXPECT_NE(inside("timeline-chart").find("<canvas"), std::string::npos);
  EXPECT_NE(inside("idle-chart").find("<canvas"), std::string::npos);
  EXPECT_NE(inside("kernel-table").find("<table"), std::string::npos);
  const auto& d = *rep->report.diagnosis;
  EXPECT_EQ(count("class=\"finding sev-"), static_cast<long>(d.findings.size() + d.minor.size()));
  for (const auto& f : d.findings) EXPECT_NE(dom.find(f.remedy.substr(0, 40)), std::string::npos) << f.title;
  // Evidence starts collapsed; kernel names fit a line, whole on hover.
  EXPECT_EQ(count("<details open"), 0);
  const std::string kernels = inside("kernel-table");
  const std::regex name_cell("<td class=\"name\" title=\"([^\"]*)\">([^<]*)</td>");
  int names = 0;
  for (auto it = std::sregex_iterator(kernels.begin(), kernels.end(), name_cell); it != std::sregex_iterator(); ++it) {
    ++names;
    std::string text = (*it)[2].str();  // as serialised: &lt; &gt; &amp; are one character each on the page
    for (const char* entity : {"&lt;", "&gt;", "&amp;", "&quot;"})
      for (size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1))
        text.replace(at, std::string_view(entity).size(), "#");
    EXPECT_LE(report::display_width(text), 60u) << (*it)[1];
  }
  EXPECT_GT(names, 0);
  // One chart per device whose allocator held 1 MiB or more; the others are named, not drawn.
  size_t charted = 0, tiny = 0;
  for (const auto& r : rep->report.ranks)
    for (const auto& dev : r.memory.devices)
      (std::max(dev.peak_allocated_bytes, dev.peak_reserved_bytes) >= (1 << 20) ? charted : tiny) += 1;
  const std::string memory = inside("memory-charts");
  size_t canvases = 0;
  for (size_t at = memory.find("<canvas"); at != std::string::npos; at = memory.find("<canvas", at + 1)) ++canvases;
  EXPECT_EQ(canvases, charted);
  if (tiny > 0) {
    EXPECT_NE(memory.find("Not charted"), std::string::npos);
  }

  ASSERT_TRUE(std::filesystem::exists(png)) << "no screenshot";
  EXPECT_GT(std::filesystem::file_size(png), 20'000u) << "screenshot is nearly empty";
}

INSTANTIATE_TEST_SUITE_P(Traces, HtmlInBrowser, ::testing::Values("dataloader_stall", "empty_cache", "dlrm_8rank"));

// A range-profiler trace has no GPU activity to chart; the page shows its counters.
TEST(HtmlCounters, RangeProfilerTraceShowsItsCountersInABrowser) {
  const std::string chromium = find_chromium();
  if (chromium.empty())
    GTEST_SKIP() << "chromium not installed (scripts/install_deps.sh installs it): the page is not rendered";
  const auto dir = scratch_dir("html_counters");
  const auto trace = dir / "rank0.json";
  std::ofstream(trace) << stepscope::testing::trace_doc(analysis::testing_support::three_kernels());
  auto rep = report_of({trace.string()});
  const auto html = dir / "report.html", png = dir / "report.png";
  std::ofstream(html) << render_html(rep->report);
  const std::string dom = render_in_browser(chromium, html, png);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("<html[^>]*data-render=\"([a-z]+)\""))) << "the report script did not run";
  EXPECT_EQ(m[1], "ok");
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("<pre id=\"render-errors\"([^>]*)>([^<]*)</pre>")));
  EXPECT_EQ(m[2].str(), "") << "script errors:\n" << m[2];
  const size_t box = dom.find("id=\"counters-box\"");
  ASSERT_NE(box, std::string::npos);
  const std::string tag = dom.substr(box, dom.find('>', box) - box);
  EXPECT_EQ(tag.find("hidden"), std::string::npos) << "the counters box stayed hidden";
  const std::string rest = dom.substr(box);
  EXPECT_NE(rest.find("fft2d_r2c_32x32"), std::string::npos);
  EXPECT_NE(rest.find("aten::conv2d"), std::string::npos) << "the operator table is missing";
  EXPECT_NE(rest.find("86.12 M"), std::string::npos) << "CUDA-core FLOPs of the fft kernel";
}


// Hovering the critical path row in the middle of the first step names that
// step's longest segments on the path (the JSON's top_segments).
TEST(HtmlInBrowserCriticalPath, HoveringThePathRowNamesTheStepsLongestSegments) {
  const std::string chromium = find_chromium();
  if (chromium.empty())
    GTEST_SKIP() << "chromium not installed (scripts/install_deps.sh installs it): the page is not rendered";
  if (!std::filesystem::exists(example_trace("item_sync"))) GTEST_SKIP() << "examples/ not found";
  auto rep = report_of({example_trace("item_sync")});
  std::string page = render_html(rep->report);
  const json data = embedded_data(page);
  const json& top = data["report"]["ranks"][0]["critical_path"]["steps"][0]["top_segments"][0];
  // A probe: move the mouse over the path row (below the steps row, whose
  // geometry report.js fixes: 4 px top, 18 px steps row, 3 px gap) and copy
  // the tooltip's text into the page.
  const std::string probe = R"(<script>
window.addEventListener("load", function () {
  var d = JSON.parse(document.getElementById("stepscope-data").textContent);
  var s = d.view.timeline[0].steps[0], frac = (s.start_us + s.end_us) / 2 / d.view.axis.duration_us;
  var c = document.querySelector("#timeline-chart canvas"), r = c.getBoundingClientRect();
  c.dispatchEvent(new MouseEvent("mousemove", { clientX: r.left + 150 + frac * (r.width - 150 - 18), clientY: r.top + 4 + 18 + 3 + 13, bubbles: true }));
  var out = document.createElement("pre"); out.id = "probe"; out.textContent = document.getElementById("tooltip").innerText;
  document.body.appendChild(out);
});
</script>)";
  page.insert(page.rfind("</body>"), probe);
  const auto dir = scratch_dir("html_path_probe");
  std::ofstream(dir / "report.html") << page;
  int rc = 0;
  const std::string dom = testing::run_shell("timeout 120 " + chromium +
                                                 " --headless --no-sandbox --disable-gpu --window-size=1400,1000 "
                                                 "--virtual-time-budget=3000 --dump-dom 'file://" +
                                                 (dir / "report.html").string() + "' 2>/dev/null",
                                             rc);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom, m, std::regex("<pre id=\"probe\">([^<]*)</pre>"))) << "no probe output";
  const std::string tip = m[1];
  EXPECT_NE(tip.find("critical path at"), std::string::npos) << tip;
  EXPECT_NE(tip.find("step " + std::to_string(data["report"]["ranks"][0]["critical_path"]["steps"][0]["step"].get<int64_t>()) +
                     " · longest on the path"),
            std::string::npos)
      << tip;
  EXPECT_NE(tip.find(top["kind"].get<std::string>() + " · " + top["name"].get<std::string>().substr(0, 30)), std::string::npos)
      << tip;
}

}  // namespace
}  // namespace stepscope::report

namespace stepscope::report {
namespace {

// A folder given with a trailing slash, or ".", names the folder in the
// page's title (it read "(no input)" and "." before).
TEST(HtmlTitle, FoldersAreNamedWithOrWithoutTheirSlash) {
  AnalyzeReport r;
  r.inputs = {"runs/step_trace/"};
  EXPECT_NE(render_html(r).find("<title>stepscope report: step_trace</title>"), std::string::npos);
  r.inputs = {"."};
  const std::string here = std::filesystem::current_path().filename().string();
  EXPECT_NE(render_html(r).find("<title>stepscope report: " + here + "</title>"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::report
