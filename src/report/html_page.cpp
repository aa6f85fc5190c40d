#include "report/html_page.h"

#include <algorithm>

namespace stepscope::report {

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

std::string fill_page(std::string_view page, const std::vector<std::pair<std::string_view, std::string_view>>& values) {
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

}  // namespace stepscope::report
