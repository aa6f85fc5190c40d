#include "trace/json/decimal_time.h"

#include <gtest/gtest.h>

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
