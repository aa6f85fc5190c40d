// What every self-contained HTML page of stepscope needs (analyze --html,
// memory --html): text escaped for HTML, JSON that is safe inside a
// <script> element, and the "@KEY@" markers of a page template filled in.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stepscope::report {

std::string html_escape(std::string_view s);
// JSON text that is safe inside <script>: a "<" can only occur inside a JSON
// string, where \u003c means the same character, so no "</script>" or "<!--"
// in a name from the input can end the element early.
std::string script_safe_json(const nlohmann::ordered_json& j);
// Fills the "@KEY@" markers of a page template in one pass, so text that was
// filled in (a title, a kernel name) is never read as a marker.
std::string fill_page(std::string_view page, const std::vector<std::pair<std::string_view, std::string_view>>& values);

}  // namespace stepscope::report
