#include "report/terminal_text.h"

#include <algorithm>
#include <vector>

namespace stepscope::report {

namespace {

bool continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// The byte length of `text`'s first `columns` code points.
size_t bytes_of_columns(std::string_view text, size_t columns) {
  size_t i = 0, n = 0;
  while (i < text.size()) {
    if (!continuation(static_cast<unsigned char>(text[i]))) {
      if (n == columns) break;
      ++n;
    }
    ++i;
  }
  return i;
}

}  // namespace

size_t display_width(std::string_view text) {
  size_t n = 0;
  for (unsigned char c : text)
    if (!continuation(c)) ++n;
  return n;
}

std::string wrap(std::string_view text, size_t width, std::string_view first_indent, std::string_view indent) {
  std::string out;
  std::string line(first_indent);
  size_t line_width = display_width(first_indent);
  bool line_has_word = false;
  auto end_line = [&] {
    out += line;
    out += '\n';
    line.assign(indent);
    line_width = display_width(indent);
    line_has_word = false;
  };
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(start, end - start);
    start = end + 1;
    if (word.empty()) {
      if (end == text.size()) break;
      continue;
    }
    size_t w = display_width(word);
    if (line_has_word && line_width + 1 + w > width) end_line();
    // On a fresh line, a word wider than the room left is cut where the line ends.
    while (!line_has_word && line_width + w > width && width > line_width) {
      const size_t cut = bytes_of_columns(word, width - line_width);
      line += word.substr(0, cut);
      line_has_word = true;
      word.remove_prefix(cut);
      w = display_width(word);
      end_line();
    }
    if (word.empty()) continue;
    if (line_has_word) {
      line += ' ';
      ++line_width;
    }
    line += word;
    line_width += w;
    line_has_word = true;
  }
  if (line_has_word) end_line();
  return out;
}

size_t widest_line(std::string_view block) {
  size_t widest = 0;
  size_t start = 0;
  while (start < block.size()) {
    size_t end = block.find('\n', start);
    if (end == std::string_view::npos) end = block.size();
    widest = std::max(widest, display_width(block.substr(start, end - start)));
    start = end + 1;
  }
  return widest;
}

}  // namespace stepscope::report
