#include "report/html_report.h"

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "report/html_assets.h"  // generated from src/report/html/ (see src/CMakeLists.txt)
#include "report/json_report.h"

namespace stepscope::report {

namespace {

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// JSON text that is safe inside <script>: a "<" can only occur inside a JSON
// string, where \u003c means the same character, so no "</script>" or "<!--"
// in a kernel name can end the element early.
std::string script_safe_json(const nlohmann::ordered_json& j) {
  std::string text = j.dump();
  std::string out;
  out.reserve(text.size() + text.size() / 64);
  for (char c : text) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

std::string default_title(const AnalyzeReport& r) {
  std::string names;
  for (size_t i = 0; i < r.inputs.size() && i < 3; ++i) {
    std::filesystem::path p(r.inputs[i]);
    std::string name = p.filename().string();
    // A rank file says little ("rank0.json.gz"): name the folder it sits in.
    if (p.has_parent_path() && name.starts_with("rank")) name = p.parent_path().filename().string() + "/" + name;
    names += (names.empty() ? "" : ", ") + name;
  }
  if (r.inputs.size() > 3) names += ", …";
  return "stepscope report: " + (names.empty() ? std::string("(no input)") : names);
}

// Fills the "@KEY@" markers of the page template in one pass, so text that
// was filled in (a title, a kernel name) is never read as a marker.
std::string fill(std::string_view page, const std::vector<std::pair<std::string_view, std::string_view>>& values) {
  std::string out;
  size_t size = page.size();
  for (const auto& v : values) size += v.second.size();
  out.reserve(size);
  size_t at = 0;
  while (at < page.size()) {
    size_t open = page.find('@', at);
    if (open == std::string_view::npos) break;
    size_t close = page.find('@', open + 1);
    if (close == std::string_view::npos) break;
    std::string_view key = page.substr(open + 1, close - open - 1);
    auto it = std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.first == key; });
    if (it == values.end()) {  // an "@" that is not a marker
      out.append(page.substr(at, open + 1 - at));
      at = open + 1;
      continue;
    }
    out.append(page.substr(at, open - at));
    out.append(it->second);
    at = close + 1;
  }
  out.append(page.substr(std::min(at, page.size())));
  return out;
}

}  // namespace

std::string render_html(const AnalyzeReport& report, const HtmlOptions& options) {
  nlohmann::ordered_json data;
  data["report"] = build_analyze_json(report);
  data["view"] = build_html_view(report, options.view);
  const std::string title = html_escape(options.title.empty() ? default_title(report) : options.title);

  const std::string json = script_safe_json(data);
  return fill(html_assets::kPage, {{"TITLE", title},
                                   {"VERSION", kToolVersion},
                                   {"CSS", html_assets::kCss},
                                   {"CHARTS_JS", html_assets::kChartsJs},
                                   {"REPORT_JS", html_assets::kReportJs},
                                   {"DATA", json}});
}

}  // namespace stepscope::report
