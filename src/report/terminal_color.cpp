#include "report/terminal_color.h"

#include <cctype>

namespace stepscope::report {

namespace {

constexpr std::string_view kBold = "\x1b[1m";
constexpr std::string_view kRed = "\x1b[31m";
constexpr std::string_view kGreen = "\x1b[32m";
constexpr std::string_view kYellow = "\x1b[33m";
constexpr std::string_view kReset = "\x1b[0m";

std::string styled(std::string_view text, std::string_view style) {
  return std::string(style) + std::string(text) + std::string(kReset);
}

// "  12. [category] ..." : a finding's heading.
bool is_finding_heading(std::string_view line) {
  if (!line.starts_with("  ")) return false;
  size_t i = 2;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
  return i > 2 && line.substr(i).starts_with(". [");
}

// Replaces the first `word` after `marker` with its styled form.
std::string style_after(std::string_view line, std::string_view marker, std::string_view word, std::string_view style) {
  const size_t at = line.find(std::string(marker) + std::string(word));
  if (at == std::string_view::npos) return std::string(line);
  const size_t w = at + marker.size();
  return std::string(line.substr(0, w)) + styled(word, style) + std::string(line.substr(w + word.size()));
}

std::string style_line(std::string_view line, bool first) {
  if (line.empty()) return {};
  if (line.starts_with("Primary bottleneck: ")) {
    const size_t end = line.find(' ', 20);
    const std::string_view what = line.substr(20, end == std::string_view::npos ? std::string_view::npos : end - 20);
    return std::string(kBold) + "Primary bottleneck: " + std::string(kReset) +
           styled(what, what == "none" ? kGreen : kRed) +
           std::string(end == std::string_view::npos ? std::string_view() : line.substr(end));
  }
  // Section titles start in the first column (every other line is indented).
  if (!first && line.front() != ' ') return styled(line, kBold);
  if (is_finding_heading(line)) return styled(line, kBold);
  if (line.starts_with("  warning: ")) return style_after(line, "  ", "warning:", kYellow);
  if (line.starts_with("     fix: ")) return style_after(line, "     ", "fix:", kGreen);
  std::string out = style_after(line, "severity ", "high", kRed);
  return style_after(out, "severity ", "medium", kYellow);
}

}  // namespace

std::string colorize_report(std::string_view plain) {
  std::string out;
  size_t start = 0;
  bool first = true;
  while (start < plain.size()) {
    size_t end = plain.find('\n', start);
    const bool newline = end != std::string_view::npos;
    if (!newline) end = plain.size();
    out += style_line(plain.substr(start, end - start), first);
    if (newline) out += '\n';
    first = false;
    start = end + 1;
  }
  return out;
}

}  // namespace stepscope::report
