#include "trace/json/decimal_time.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace stepscope::trace {
namespace {

int64_t ns(std::string_view s) {
  int64_t out = -42;
  EXPECT_TRUE(parse_us_as_ns(s, out)) << s;
  return out;
}

TEST(DecimalTime, KeepsNanosecondDigitsPastDoublePrecision) {
  // 1790857026000000.123 us has 19 significant digits: a double cannot hold it.
  EXPECT_EQ(ns("1790857026000000.123"), 1790857026000000123);
  EXPECT_EQ(ns("5094261113357.302"), 5094261113357302);
}

TEST(DecimalTime, IntegerMicroseconds2023Format) { EXPECT_EQ(ns("1669783687389324"), 1669783687389324000); }

TEST(DecimalTime, RoundsSubNanosecondHalfAwayFromZero) {
  EXPECT_EQ(ns("1.0005"), 1001);
  EXPECT_EQ(ns("1.0004"), 1000);
  EXPECT_EQ(ns("-1.0005"), -1001);
}

TEST(DecimalTime, ExponentForms) {
  EXPECT_EQ(ns("1.5e3"), 1500000);
  EXPECT_EQ(ns("2E-3"), 2);
}

TEST(DecimalTime, RejectsNonNumbersAndOverflow) {
  int64_t out = 0;
  EXPECT_FALSE(parse_us_as_ns("", out));
  EXPECT_FALSE(parse_us_as_ns("abc", out));
  EXPECT_FALSE(parse_us_as_ns("1.2.3", out));
  EXPECT_FALSE(parse_us_as_ns("99999999999999999999", out));  // > int64 ns
  EXPECT_FALSE(parse_us_as_ns("1e300", out));
}

}  // namespace
}  // namespace stepscope::trace

namespace stepscope::trace {
namespace {

// The 64-bit fast path and the exact general path agree on every plain
// decimal, including the edges: 18 vs 19 digits, values near INT64_MAX after
// scaling, rounding at exactly half, leading zeros, "-0", "5." and ".5".
TEST(DecimalTime, FastPathAgreesWithTheGeneralPath) {
  uint64_t state = 0x243F6A8885A308D3ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  std::vector<std::string> cases = {"0", "-0", "5.", ".5", "-.5", "0.0005", "0.0015", "-0.0005", "9223372036854775",
                                    "9223372036854775.807", "9223372036854775.808", "922337203685477.5807",
                                    "999999999999999999", "99999999999999999.9", "000000000000000001.5",
                                    "1234567890123456789", "9999999999999999999", "-9223372036854775808",
                                    "-9223372036854775.808", "9999999999999999.999", "1712195495519689.047",
                                    "-1712195495519689.047", "1844674407370955.1615", ".", "-", "1..2", "1.-2", "--1",
                                    // bytes next to '0'..'9' inside an 8-byte word ('/' 0x2F, ':' 0x3A)
                                    "1234567:", "12345/78", "1234567812345:78", "12345678.1234/678", "12345678 ",
                                    "1234567812345678", "12345678123456781", "123456781234567812"};
  for (int i = 0; i < 200000; ++i) {
    std::string s;
    if (next() % 3 == 0) s += '-';
    int int_digits = static_cast<int>(next() % 20);
    int frac_digits = static_cast<int>(next() % 8);
    for (int k = 0; k < int_digits; ++k) s += static_cast<char>('0' + next() % 10);
    if (next() % 4 != 0) {
      s += '.';
      for (int k = 0; k < frac_digits; ++k) s += static_cast<char>('0' + (next() % 3 == 0 ? 5 : next() % 10));
    }
    cases.push_back(std::move(s));
  }
  size_t inline_taken = 0;
  for (const auto& s : cases) {
    for (int scale : {0, 3}) {
      int64_t fast = 7, general = 7, by_64 = 7, by_inline = 7;
      bool ok_fast = parse_scaled_decimal(s, scale, fast);
      bool ok_general = parse_scaled_decimal_general(s, scale, general);
      ASSERT_EQ(ok_fast, ok_general) << '"' << s << "\" scale " << scale;
      if (ok_fast) {
        ASSERT_EQ(fast, general) << '"' << s << "\" scale " << scale;
      }
      // Each of the two paths on its own: the 64-bit one on everything, the
      // inline one wherever it does not decline.
      bool fractional = false;
      ASSERT_EQ(parse_scaled_decimal_64(s, scale, by_64, fractional), ok_general) << '"' << s << "\" scale " << scale;
      if (ok_general) {
        ASSERT_EQ(by_64, general) << '"' << s << "\" scale " << scale;
      }
      if (inline_decimal(s, scale, by_inline, fractional)) {
        ++inline_taken;
        ASSERT_TRUE(ok_general) << '"' << s << "\" scale " << scale;
        ASSERT_EQ(by_inline, general) << '"' << s << "\" scale " << scale;
        ASSERT_EQ(fractional, s.find('.') != std::string::npos) << '"' << s << '"';
      }
    }
  }
  // The random cases are mostly what the inline path takes: it was tested.
  EXPECT_GT(inline_taken, cases.size() / 2);
}

// Epoch microseconds with a nanosecond fraction (19 digits, as in HTA's
// ns_resolution_trace) are the common case of such traces: the inline path
// must take them, not only the slower exact paths. 19 digits that scale past
// INT64_MAX, and INT64_MIN itself, are left to the exact paths.
TEST(DecimalTime, InlinePathTakesNineteenDigitTimes) {
  int64_t out = 0;
  bool fractional = false;
  ASSERT_TRUE(inline_decimal("1712195495519689.047", 3, out, fractional));
  EXPECT_EQ(out, 1712195495519689047);
  EXPECT_TRUE(fractional);
  ASSERT_TRUE(inline_decimal("-9223372036854775.807", 3, out, fractional));
  EXPECT_EQ(out, -9223372036854775807);
  EXPECT_FALSE(inline_decimal("9223372036854775.808", 3, out, fractional));
  EXPECT_FALSE(inline_decimal("9999999999999999999", 0, out, fractional));
  EXPECT_FALSE(inline_decimal("-9223372036854775808", 0, out, fractional));
  EXPECT_FALSE(inline_decimal("12345678901234567890", 0, out, fractional));  // 20 digits
}

// The reader marks a trace fractional from the flag (2024+ traces write
// float µs): it must see a fraction or an exponent on every path, fast or general.
TEST(DecimalTime, SaysWhetherTheTextWasFractional) {
  struct Case {
    const char* text;
    bool fractional;
  };
  for (const Case& c : {Case{"1669783687389324", false}, Case{"-42", false}, Case{"0", false},
                        Case{"5094261113357.302", true}, Case{"1.", true}, Case{"-0.5", true},
                        Case{"1e3", true}, Case{"2E-3", true}, Case{"12345678901234567890", false},
                        Case{"1234567890123456789.25", true}}) {
    int64_t out = 0;
    bool fractional = !c.fractional;
    EXPECT_TRUE(parse_scaled_decimal(c.text, 3, out, fractional) || std::string_view(c.text).size() >= 20) << c.text;
    EXPECT_EQ(fractional, c.fractional) << c.text;
  }
}

}  // namespace
}  // namespace stepscope::trace
