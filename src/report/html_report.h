// `stepscope analyze --html FILE`: one self-contained HTML page (no network
// fetch, no library) with the findings, per-step attribution, a GPU timeline
// overview, idle time per stream, top kernels and the allocator over time.
// The page carries its data as embedded JSON (the --json report plus the
// downsampled drawing data of html_view.h) and draws it with the script in
// src/report/html/; the page, style and scripts are embedded at build time.
#pragma once

#include <string>

#include "report/analyze_report.h"
#include "report/html_view.h"

namespace stepscope::report {

struct HtmlOptions {
  HtmlViewOptions view;
  std::string title;  // page title; empty: "stepscope report: <inputs>"
};

std::string render_html(const AnalyzeReport& report, const HtmlOptions& options = {});

}  // namespace stepscope::report
