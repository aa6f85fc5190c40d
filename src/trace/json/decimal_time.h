// Exact decimal-to-integer conversion for trace timestamps. Kineto writes
// microseconds as decimal text ("5094261113357.302"); going through a double
// loses the nanosecond digits past about 2^53 ns (104 days of uptime), so the
// digits are scaled as integers instead.
#pragma once

#include <cstdint>
#include <string_view>

namespace stepscope::trace {

// Parses a JSON number and returns value * 10^scale rounded half away from
// zero. False if the text is not a number or the result does not fit int64.
bool parse_scaled_decimal(std::string_view text, int scale, int64_t& out);
// The same; `fractional` says whether the text has a fraction or an exponent.
bool parse_scaled_decimal(std::string_view text, int scale, int64_t& out, bool& fractional);

// The exact path behind parse_scaled_decimal for any JSON number (exponents,
// up to 36 significant digits). parse_scaled_decimal tries a 64-bit fast path
// for plain decimals first and must agree with this one (tests compare them).
bool parse_scaled_decimal_general(std::string_view text, int scale, int64_t& out);

// Microseconds as text -> nanoseconds.
inline bool parse_us_as_ns(std::string_view text, int64_t& out) {
  return parse_scaled_decimal(text, 3, out);
}
inline bool parse_us_as_ns(std::string_view text, int64_t& out, bool& fractional) {
  return parse_scaled_decimal(text, 3, out, fractional);
}

}  // namespace stepscope::trace
