#include "cli/option_checks.h"

#include <fmt/core.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace stepscope::cli {
namespace {

// The value as the message shows it: quoted, cut short.
std::string shown(const std::string& text) { return "\"" + (text.size() > 40 ? text.substr(0, 40) + "..." : text) + "\""; }

}  // namespace

CLI::Validator whole_number(int64_t lo, int64_t hi) {
  const std::string expected = fmt::format("expected a whole number from {} to {}", lo, hi);
  return CLI::Validator(
      [lo, hi, expected](std::string& text) -> std::string {
        // strtoll alone takes "12abc", " 12" and "0x10"; only [+-]digits are a whole number here.
        size_t i = (!text.empty() && (text[0] == '-' || text[0] == '+')) ? 1 : 0;
        bool digits = i < text.size();
        for (size_t k = i; k < text.size(); ++k) digits = digits && text[k] >= '0' && text[k] <= '9';
        if (!digits) return fmt::format("{}, got {}", expected, shown(text));
        errno = 0;
        const long long v = std::strtoll(text.c_str(), nullptr, 10);
        if (errno == ERANGE || v < lo || v > hi) return fmt::format("{}, got {}", expected, shown(text));
        return "";
      },
      fmt::format("INT in [{} - {}]", lo, hi));
}

CLI::Validator number_above(double lo, double hi) {
  const std::string expected = fmt::format("expected a number above {:g} and at most {:g}", lo, hi);
  return CLI::Validator(
      [lo, hi, expected](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double v = text.empty() ? NAN : std::strtod(text.c_str(), &end);
        // strtod takes "nan" and "inf": refused by the range test, which NaN fails.
        if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !(v > lo && v <= hi))
          return fmt::format("{}, got {}", expected, shown(text));
        return "";
      },
      fmt::format("NUMBER in ({:g} - {:g}]", lo, hi));
}

}  // namespace stepscope::cli
