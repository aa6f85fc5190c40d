#include "report/memory_html.h"

#include <filesystem>

#include "report/html_assets.h"  // generated from src/report/html/ (see src/CMakeLists.txt)
#include "report/html_page.h"
#include "report/json_report.h"
#include "report/memory_json.h"

namespace stepscope::report {

std::string render_memory_html(const memory::MemoryReport& report, const std::vector<diagnose::Finding>& findings) {
  const std::string title =
      html_escape("stepscope memory: " + std::filesystem::path(report.file).filename().string());
  const std::string json = script_safe_json(build_memory_json(report, findings));
  return fill_page(html_assets::kMemoryPage, {{"TITLE", title},
                                              {"VERSION", kToolVersion},
                                              {"CSS", html_assets::kCss},
                                              {"CHARTS_JS", html_assets::kChartsJs},
                                              {"MEMORY_JS", html_assets::kMemoryJs},
                                              {"DATA", json}});
}

}  // namespace stepscope::report
