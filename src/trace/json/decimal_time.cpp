#include "trace/json/decimal_time.h"


namespace stepscope::trace {

bool parse_scaled_decimal_general(std::string_view s, int scale, int64_t& out) {
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
    negative = s[i] == '-';
    ++i;
  }
  __int128 mantissa = 0;
  int exponent = 0;        // value = mantissa * 10^exponent
  int digits = 0;
  bool sticky = false;     // non-zero digits dropped beyond 36 significant digits
  constexpr int kMaxDigits = 36;
  auto take = [&](char c, bool fractional) {
    if (digits < kMaxDigits) {
      mantissa = mantissa * 10 + (c - '0');
      if (mantissa != 0) ++digits;
      if (fractional) --exponent;
    } else {
      if (c != '0') sticky = true;
      if (!fractional) ++exponent;
    }
  };
  size_t int_start = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') take(s[i++], false);
  bool any = i > int_start;
  if (i < s.size() && s[i] == '.') {
    ++i;
    size_t frac_start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') take(s[i++], true);
    any = any || i > frac_start;
  }
  if (!any) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) eneg = s[i++] == '-';
    size_t e_start = i;
    int e = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (e < 100000) e = e * 10 + (s[i] - '0');
      ++i;
    }
    if (i == e_start) return false;
    exponent += eneg ? -e : e;
  }
  if (i != s.size()) return false;
  exponent += scale;

  constexpr __int128 kLimit = static_cast<__int128>(INT64_MAX);
  if (mantissa == 0) {
    out = 0;
    return true;
  }
  if (exponent >= 0) {
    if (exponent > 19) return false;
    for (int k = 0; k < exponent; ++k) {
      mantissa *= 10;
      if (mantissa > kLimit) return false;
    }
  } else {
    int drop = -exponent;
    if (drop > 38) {
      out = 0;
      return true;
    }
    __int128 div = 1;
    for (int k = 0; k < drop; ++k) div *= 10;
    __int128 q = mantissa / div;
    __int128 r = mantissa % div;
    // Half away from zero; dropped digits beyond the kept ones only matter at exactly half.
    if (r * 2 > div || (r * 2 == div)) ++q;
    (void)sticky;
    mantissa = q;
  }
  if (mantissa > kLimit) return false;
  out = negative ? -static_cast<int64_t>(mantissa) : static_cast<int64_t>(mantissa);
  return true;
}


// Appends the run of digits at p to v (detail::append_digits) and counts
// them. Returns the position after the run, or nullptr past 18 digits in all
// (v is then meaningless and the caller takes the general path).
inline const char* digit_run(const char* p, const char* end, uint64_t& v, int& digits) {
  const char* q = detail::append_digits(p, end, v);
  digits += static_cast<int>(q - p);
  return digits > 18 ? nullptr : q;
}

bool parse_scaled_decimal_64(std::string_view s, int scale, int64_t& out, bool& fractional) {
  // What inline_decimal declines but still fits 64 bits: [-]digits[.digits]
  // with at most 18 digits in all and any number of fraction digits (rounded
  // here). Anything else (exponents, '+', long mantissas, overflow) takes the
  // general path, which defines the result.
  const char* p = s.data();
  const char* end = p + s.size();
  bool negative = false;
  if (p < end && *p == '-') {
    negative = true;
    ++p;
  }
  uint64_t v = 0;
  int digits = 0;
  p = digit_run(p, end, v, digits);
  const int integer = digits;
  fractional = false;
  if (p != nullptr && p < end && *p == '.') {
    fractional = true;
    p = digit_run(p + 1, end, v, digits);
  }
  if (p == nullptr || p != end || digits == 0 || scale < 0 || scale > 18) {
    fractional = s.find_first_of(".eE") != std::string_view::npos;
    return parse_scaled_decimal_general(s, scale, out);
  }
  const int exponent = scale - (digits - integer);
  if (exponent >= 0) {
    const uint64_t m = detail::kPow10[exponent];
    if (v > detail::kMaxBeforeScale[exponent]) return parse_scaled_decimal_general(s, scale, out);
    v *= m;
  } else {
    const uint64_t div = detail::kPow10[-exponent];
    const uint64_t r = v % div;
    v /= div;
    if (r * 2 >= div) ++v;  // half away from zero (on the magnitude)
  }
  out = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}


}  // namespace stepscope::trace
