// Laying text out for a terminal of a given width: display width in
// columns, word wrapping with a hanging indent, and the widest line of a
// rendered block (to choose a narrower layout when one does not fit).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace stepscope::report {

// The default terminal report keeps every line within this many columns.
inline constexpr size_t kTerminalWidth = 100;

// Columns `text` takes: UTF-8 code points, not bytes, so "µs" counts one.
size_t display_width(std::string_view text);

// `text` wrapped at spaces into lines of at most `width` columns, the first
// starting with `first_indent`, the others with `indent`; a word longer than
// a line is cut (its rest on the next line). Each line ends with '\n'.
std::string wrap(std::string_view text, size_t width, std::string_view first_indent, std::string_view indent);

// The display width of the widest line of a rendered block.
size_t widest_line(std::string_view block);

}  // namespace stepscope::report
