// Renders a page in headless Chromium for the HTML reports' tests (analyze
// --html, memory --html): the tests skip where Chromium is not installed
// (scripts/install_deps.sh installs it).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli_run.h"

namespace stepscope::report {

inline std::string find_chromium() {
  if (const char* env = std::getenv("STEPSCOPE_CHROMIUM")) return env;
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    std::string cmd = std::string("command -v ") + name + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return name;
  }
  return {};
}

// Renders `page` in headless Chromium: returns the DOM after the scripts ran
// and writes a screenshot beside the page.
inline std::string render_in_browser(const std::string& chromium, const std::filesystem::path& html,
                              const std::filesystem::path& png) {
  const std::string flags = " --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,2400 ";
  int rc = 0;  // a failed render shows as a DOM without the charts
  std::string dom = testing::run_shell(
      "timeout 120 " + chromium + flags + "--dump-dom 'file://" + html.string() + "' 2>/dev/null", rc);
  std::system(("timeout 120 " + chromium + flags + "--screenshot='" + png.string() + "' 'file://" + html.string() +
               "' >/dev/null 2>&1").c_str());
  return dom;
}

}  // namespace stepscope::report
