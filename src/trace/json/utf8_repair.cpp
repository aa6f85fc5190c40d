#include "trace/json/utf8_repair.h"

#include <cstdint>

namespace stepscope::trace {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the sequence a lead byte starts, and the range its second byte
// must fall in (which excludes overlong forms, surrogates and code points
// past U+10FFFF); length 0 for a byte that cannot start a sequence.
struct Lead {
  int length;
  uint8_t second_lo, second_hi;
};

Lead lead_of(uint8_t b) {
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};  // continuation bytes, C0, C1, F5..FF
}

}  // namespace

size_t replace_invalid_utf8(std::string_view text, std::string& out) {
  out.clear();
  out.reserve(text.size() + 16);
  size_t replaced = 0;
  size_t i = 0;
  while (i < text.size()) {
    const auto b = static_cast<uint8_t>(text[i]);
    if (b < 0x80) {
      out.push_back(static_cast<char>(b));
      ++i;
      continue;
    }
    const Lead lead = lead_of(b);
    // How many bytes from i still form a prefix of a valid sequence.
    size_t good = lead.length == 0 ? 0 : 1;
    while (good > 0 && good < static_cast<size_t>(lead.length) && i + good < text.size()) {
      const auto c = static_cast<uint8_t>(text[i + good]);
      const bool fits = good == 1 ? (c >= lead.second_lo && c <= lead.second_hi) : (c >= 0x80 && c <= 0xBF);
      if (!fits) break;
      ++good;
    }
    if (lead.length != 0 && good == static_cast<size_t>(lead.length)) {
      out.append(text.substr(i, good));
      i += good;
    } else {
      out.append(kReplacement);
      ++replaced;
      i += good == 0 ? 1 : good;
    }
  }
  return replaced;
}

}  // namespace stepscope::trace
