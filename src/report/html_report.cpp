#include "report/html_report.h"

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "report/html_assets.h"
#include "report/html_page.h"  // generated from src/report/html/ (see src/CMakeLists.txt)
#include "report/json_report.h"

namespace stepscope::report {

namespace {

std::string default_title(const AnalyzeReport& r) {
  std::string names;
  for (size_t i = 0; i < r.inputs.size() && i < 3; ++i) {
    // "traces/" and "." name their folder, not an empty or "." file name.
    std::error_code ec;
    std::filesystem::path p = std::filesystem::absolute(r.inputs[i], ec);
    p = (ec ? std::filesystem::path(r.inputs[i]) : p).lexically_normal();
    if (!p.has_filename() && p.has_parent_path()) p = p.parent_path();
    std::string name = p.filename().string();
    // A rank file says little ("rank0.json.gz"): name the folder it sits in.
    if (p.has_parent_path() && name.starts_with("rank")) name = p.parent_path().filename().string() + "/" + name;
    names += (names.empty() ? "" : ", ") + name;
  }
  if (r.inputs.size() > 3) names += ", …";
  return "stepscope report: " + (names.empty() ? std::string("(no input)") : names);
}

}  // namespace

std::string render_html(const AnalyzeReport& report, const HtmlOptions& options) {
  nlohmann::ordered_json data;
  data["report"] = build_analyze_json(report);
  data["view"] = build_html_view(report, options.view);
  const std::string title = html_escape(options.title.empty() ? default_title(report) : options.title);

  const std::string json = script_safe_json(data);
  return fill_page(html_assets::kPage, {{"TITLE", title},
                                   {"VERSION", kToolVersion},
                                   {"CSS", html_assets::kCss},
                                   {"CHARTS_JS", html_assets::kChartsJs},
                                   {"REPORT_JS", html_assets::kReportJs},
                                   {"DATA", json}});
}

}  // namespace stepscope::report
