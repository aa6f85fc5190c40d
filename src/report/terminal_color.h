// ANSI colours for a rendered terminal report. The renderers write plain
// text (and printable_lines escapes any control byte a trace smuggled in);
// this pass then styles lines by the role their shape gives them: section
// titles and finding headings bold, the primary bottleneck and high
// severities red, medium severities yellow, remedies green, warnings yellow.
// Colour codes take no columns, so the layout is unchanged.
#pragma once

#include <string>
#include <string_view>

namespace stepscope::report {

std::string colorize_report(std::string_view plain);

}  // namespace stepscope::report
