// Exact decimal-to-integer conversion for trace timestamps. Kineto writes
// microseconds as decimal text ("5094261113357.302"); going through a double
// loses the nanosecond digits past about 2^53 ns (104 days of uptime), so the
// digits are scaled as integers instead.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace stepscope::trace {

// Parses a JSON number and returns value * 10^scale rounded half away from
// zero (scale 0..18). False if the text is not a number or the result does
// not fit int64. `fractional` says whether the text has a fraction or an
// exponent.
inline bool parse_scaled_decimal(std::string_view text, int scale, int64_t& out, bool& fractional);
inline bool parse_scaled_decimal(std::string_view text, int scale, int64_t& out);

// The path parse_scaled_decimal takes for what inline_decimal leaves:
// a 64-bit path for up to 18 digits, then the general one.
bool parse_scaled_decimal_64(std::string_view text, int scale, int64_t& out, bool& fractional);

namespace detail {
// INT64_MAX / 10^e: the largest magnitude that scaling by 10^e keeps in int64.
inline constexpr uint64_t kMaxBeforeScale[19] = {
    9223372036854775807ull, 922337203685477580ull, 92233720368547758ull, 9223372036854775ull,
    922337203685477ull,     92233720368547ull,     9223372036854ull,     922337203685ull,
    92233720368ull,         9223372036ull,         922337203ull,         92233720ull,
    9223372ull,             922337ull,             92233ull,             9223ull,
    922ull,                 92ull,                 9ull};
inline constexpr uint64_t kPow10[19] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
                                        10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
                                        100000000000ull, 1000000000000ull, 10000000000000ull,
                                        100000000000000ull, 1000000000000000ull, 10000000000000000ull,
                                        100000000000000000ull, 1000000000000000000ull};

// Eight ASCII bytes (little-endian word) that are all '0'..'9': each byte's
// high nibble is 3, and adding 6 carries no digit above '9' into it.
inline bool eight_digits(uint64_t w) {
  return (w & 0xF0F0F0F0F0F0F0F0ull) == 0x3030303030303030ull &&
         ((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) == 0x3030303030303030ull;
}

// The value of eight ASCII digits, first byte most significant: pairs, then
// quads, then the whole, each step one multiply-add in parallel lanes.
inline uint64_t eight_digit_value(uint64_t w) {
  w -= 0x3030303030303030ull;
  w = (w * 10 + (w >> 8)) & 0x00FF00FF00FF00FFull;    // 2-digit lanes
  w = (w * 100 + (w >> 16)) & 0x0000FFFF0000FFFFull;  // 4-digit lanes
  return (w * 10000 + (w >> 32)) & 0xFFFFFFFFull;     // 8 digits
}

// Appends the digits at p to v: up to 16 of them eight at a time (timestamps
// have 13-16 integer digits), the rest one at a time. v is meaningful only
// while the caller's count stays within 19 digits (10^19 - 1 < 2^64).
inline const char* append_digits(const char* p, const char* end, uint64_t& v) {
  for (int k = 0; k < 2 && end - p >= 8; ++k) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    if (!eight_digits(w)) break;
    v = v * 100000000ull + eight_digit_value(w);
    p += 8;
  }
  for (unsigned d; p < end && (d = static_cast<unsigned char>(*p) - unsigned{'0'}) <= 9; ++p) v = v * 10 + d;
  return p;
}
}  // namespace detail

// The numbers traces are made of, inline: ids ("-?digits") and microsecond
// times whose fraction has at most `scale` digits ("1669783687547.114"), 19
// digits at most (epoch microseconds with a nanosecond fraction,
// "1712195495519689.047", have 19), so no rounding, exponent or 128-bit maths
// is needed: 19 digits fit in uint64, and the scaled value is checked against
// INT64_MAX. Returns
// false for anything else, which the caller sends to the full parser; out and
// fractional are then unspecified.
inline bool inline_decimal(std::string_view s, int scale, int64_t& out, bool& fractional) {
  const char* p = s.data();
  const char* const end = p + s.size();
  const bool negative = p < end && *p == '-';
  p += negative;
  const char* const int_begin = p;
  uint64_t v = 0;
  p = detail::append_digits(p, end, v);
  const long int_digits = p - int_begin;
  long frac_digits = 0;
  fractional = p < end && *p == '.';
  if (fractional) {
    const char* const frac_begin = ++p;
    p = detail::append_digits(p, end, v);
    frac_digits = p - frac_begin;
    if (frac_digits == 0) return false;
  }
  if (p != end || int_digits == 0 || int_digits + frac_digits > 19 || frac_digits > scale || scale > 18)
    return false;
  const long e = scale - frac_digits;
  if (v > detail::kMaxBeforeScale[e]) return false;
  v *= detail::kPow10[e];
  out = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

inline bool parse_scaled_decimal(std::string_view text, int scale, int64_t& out, bool& fractional) {
  return inline_decimal(text, scale, out, fractional) || parse_scaled_decimal_64(text, scale, out, fractional);
}

inline bool parse_scaled_decimal(std::string_view text, int scale, int64_t& out) {
  bool fractional = false;
  return parse_scaled_decimal(text, scale, out, fractional);
}

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
