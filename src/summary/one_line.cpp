#include "summary/one_line.h"

#include <algorithm>
#include <cstdio>

namespace stepscope::summary {

std::string one_line(std::string_view text, size_t max_bytes) {
  size_t end = std::min(text.size(), max_bytes);
  while (end < text.size() && end > 0 && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) --end;
  std::string out;
  out.reserve(end);
  for (size_t i = 0; i < end; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return end < text.size() ? out + "..." : out;
}

}  // namespace stepscope::summary
