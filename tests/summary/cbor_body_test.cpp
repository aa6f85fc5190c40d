// The summary body's own CBOR reader (summary/cbor_body.h) against
// nlohmann's: the same tree for what stepscope writes, and a one-line refusal
// of what it does not (indefinite lengths, tags, other simple values, a
// truncated item, trailing bytes, a non-text key).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "summary/body_arena.h"
#include "summary/cbor_body.h"

namespace stepscope::summary {
namespace {

nlohmann::json read(const std::vector<uint8_t>& cbor) {
  BodyArenaScope arena;
  return nlohmann::json(read_cbor_body(cbor));
}

std::string error_of(const std::vector<uint8_t>& cbor) {
  try {
    (void)read(cbor);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(CborBody, ReadsWhatToCborWritesAsNlohmannDoes) {
  nlohmann::json j = {{"u", 42u},
                      {"big", 18446744073709551615ull},
                      {"neg", -7},
                      {"min", INT64_MIN},
                      {"f32", 0.5},
                      {"f64", 0.1},
                      {"inf", 1e308 * 10},
                      {"flags", {true, false, nullptr}},
                      {"name", "a kernel name longer than fifteen bytes"},
                      {"utf8", "\xc3\xa9t\xc3\xa9"},
                      {"empty", nlohmann::json::object()},
                      {"nested", {{"a", {1, 2, {{"b", {}}}}}}}};
  j["bytes"] = nlohmann::json::binary({1, 2, 3});
  const std::vector<uint8_t> cbor = nlohmann::json::to_cbor(j);
  EXPECT_EQ(read(cbor), nlohmann::json::from_cbor(cbor));
  EXPECT_EQ(read(cbor), j);
}

TEST(CborBody, HalfFloatsAndRepeatedKeys) {
  // 0xf9 3c00 = 1.0, 0xf9 0001 = 2^-24 (subnormal), 0xf9 fc00 = -inf.
  const std::vector<uint8_t> halves = {0x83, 0xf9, 0x3c, 0x00, 0xf9, 0x00, 0x01, 0xf9, 0xfc, 0x00};
  EXPECT_EQ(read(halves), nlohmann::json::from_cbor(halves));
  // {"a": 1, "a": 2}: the last value stays, as in nlohmann's reader.
  const std::vector<uint8_t> twice = {0xa2, 0x61, 'a', 0x01, 0x61, 'a', 0x02};
  EXPECT_EQ(read(twice), nlohmann::json::from_cbor(twice));
}

TEST(CborBody, RefusesWhatStepscopeDoesNotWrite) {
  EXPECT_EQ(error_of({0x9f, 0x01, 0xff}), "parse error at byte 1: an item of indefinite length (stepscope writes none)");
  EXPECT_EQ(error_of({0xc1, 0x01}), "parse error at byte 1: a tagged item (stepscope writes none)");
  EXPECT_EQ(error_of({0xf7}), "parse error at byte 1: simple value 23 (not false, true, null or a float)");
  EXPECT_EQ(error_of({0x82, 0x01}), "parse error at byte 3: unexpected end of input");
  EXPECT_EQ(error_of({0x63, 'a', 'b'}), "parse error at byte 4: unexpected end of input");
  EXPECT_EQ(error_of({0x01, 0x02}), "not a whole CBOR value");
  EXPECT_EQ(error_of({0xa1, 0x01, 0x02}), "parse error at byte 2: a map key that is not text");
  EXPECT_EQ(error_of({0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}),
            "parse error at byte 10: unexpected end of input");  // a huge count is not reserved
}

TEST(CborBody, NestingAndUtf8AreChecked) {
  EXPECT_EQ(error_of(std::vector<uint8_t>(33, 0x81)), "nested more than 32 levels deep");
  std::vector<uint8_t> deepest(32, 0x81);
  deepest.push_back(0x01);
  EXPECT_EQ(read(deepest), nlohmann::json::from_cbor(deepest));
  // The first text that is not UTF-8 is named, repaired; parsed to the end first.
  EXPECT_EQ(error_of({0x82, 0x62, 'o', 'k', 0x62, 'x', 0xff}), "text that is not UTF-8 (\"x\xef\xbf\xbd\")");
}

TEST(CborBody, TheArenaIsOnlyUsedInsideAScope) {
  EXPECT_THROW((void)read_cbor_body({0x80}), std::logic_error);
}

}  // namespace
}  // namespace stepscope::summary
