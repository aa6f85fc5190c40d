#include "trace/json/utf8_repair.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace stepscope::trace {
namespace {

struct Case {
  std::string in, out;
  size_t replaced;
};

// Expected outputs are CPython 3.11's bytes.decode("utf-8", "replace")
// re-encoded: the maximal-subpart rule the function promises.
TEST(Utf8Repair, ReplacesMaximalSubpartsAsPythonDoes) {
  const std::string r = "\xEF\xBF\xBD";
  const Case cases[] = {
      {"plain ascii", "plain ascii", 0},
      {"na\xC3\xAFve \xE2\x9C\x93 \xF0\x9D\x84\x9E", "na\xC3\xAFve \xE2\x9C\x93 \xF0\x9D\x84\x9E", 0},
      {"\xFF", r, 1},
      {"\x80", r, 1},
      {"abc\xC3", "abc" + r, 1},                      // cut after the lead byte
      {"\xC3(", r + "(", 1},
      {"\xE2\x82", r, 1},                             // a 3-byte sequence cut after 2: one replacement
      {"\xE2\x82(", r + "(", 1},
      {"\xE0\x80\x80", r + r + r, 3},                 // overlong
      {"\xED\xA0\x80", r + r + r, 3},                 // UTF-16 surrogate
      {"\xF0\x80\x80\x80", r + r + r + r, 4},         // overlong 4-byte
      {"\xF4\x90\x80\x80", r + r + r + r, 4},         // past U+10FFFF
      {"\xF0\x9F\x98", r, 1},                         // emoji cut short
      {"\xC0\xAF", r + r, 2},
      {"\xF5\x80", r + r, 2},
      {"gemm_\xFF\xFE_kernel", "gemm_" + r + r + "_kernel", 2},
      {"\xF1\x80\x80\xE1\x80\xC2", r + r + r, 3},
  };
  for (const Case& c : cases) {
    std::string out = "stale";
    EXPECT_EQ(replace_invalid_utf8(c.in, out), c.replaced) << testing::PrintToString(c.in);
    EXPECT_EQ(out, c.out) << testing::PrintToString(c.in);
  }
}

// On random bytes the output is always valid (repairing it changes nothing)
// and every valid input comes back unchanged.
TEST(Utf8Repair, OutputIsAlwaysValidAndValidInputIsKept) {
  std::mt19937_64 rng(std::random_device{}());
  std::string in, out, again;
  for (int i = 0; i < 20000; ++i) {
    in.resize(rng() % 24);
    for (char& ch : in) {
      // Mostly bytes near the boundaries that matter, some ASCII.
      const uint8_t picks[] = {0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2,
                               0xDF, 0xE0, 0xE1, 0xED, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xFF};
      ch = static_cast<char>(rng() % 3 == 0 ? static_cast<uint8_t>(rng()) : picks[rng() % sizeof picks]);
    }
    const size_t n = replace_invalid_utf8(in, out);
    ASSERT_EQ(replace_invalid_utf8(out, again), 0u) << testing::PrintToString(in);
    ASSERT_EQ(again, out);
    if (n == 0) ASSERT_EQ(out, in) << testing::PrintToString(in);
  }
}

}  // namespace
}  // namespace stepscope::trace
