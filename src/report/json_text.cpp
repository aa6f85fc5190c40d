#include "report/json_text.h"

#include <fmt/format.h>

#include <cmath>

namespace stepscope::report {

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  size_t clean_from = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + clean_from, i - clean_from);
    clean_from = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        out += "\\u00";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 15]);
    }
  }
  out.append(s.data() + clean_from, s.size() - clean_from);
  out.push_back('"');
}

void append_int(std::string& out, int64_t v) {
  const fmt::format_int text(v);
  out.append(text.data(), text.size());
}

void append_us_from_ns(std::string& out, int64_t ns) {
  // Split on the magnitude so INT64_MIN and negative values format correctly.
  const bool negative = ns < 0;
  const uint64_t mag = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  if (negative) out += '-';
  const fmt::format_int whole(mag / 1000);
  out.append(whole.data(), whole.size());
  const auto frac = static_cast<unsigned>(mag % 1000);
  const char digits[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                          static_cast<char>('0' + frac % 10)};
  out.append(digits, 4);
}

void append_json_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  const size_t from = out.size();
  fmt::format_to(std::back_inserter(out), "{}", v);
  // "5" would read back as an integer: keep it a float, as it was written.
  if (out.find_first_of(".eE", from) == std::string::npos) out += ".0";
}

}  // namespace stepscope::report
