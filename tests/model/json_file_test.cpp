// The planner's JSON reader: every parse problem is a one-line error naming
// the input and, where the parser knows it, the field; it never throws.
#include "model/json_file.h"

#include <gtest/gtest.h>

#include <string>

#include "trace/trace_fixtures.h"

namespace stepscope::model {

namespace {

TEST(JsonFile, NumberPastDoubleRangeNamesTheField) {
  std::string error;
  // nlohmann throws out_of_range (not parse_error) for 1e309: it used to escape.
  EXPECT_FALSE(parse_json_text(R"({"layers": 1e309})", "m.json", error));
  EXPECT_EQ(error, "m.json: field \"layers\" holds a number out of range (1e309)");
  EXPECT_FALSE(parse_json_text(R"({"gpu": "h100-sxm", "gemm": [{"m": 1}, {"m": 2, "tflops": -1e400}]})", "p.json", error));
  EXPECT_EQ(error, "p.json: field \"gemm[1].tflops\" holds a number out of range (-1e400)");
  EXPECT_FALSE(parse_json_text("1e309", "x.json", error));
  EXPECT_EQ(error, "x.json: number 1e309 is out of range");
}

// A key with a newline (JSON's \n escape) split the error in two lines
// (fuzz_plan_model): the quoted field escapes control characters, quotes and
// backslashes.
TEST(JsonFile, FieldNamesInErrorsStayOnOneLine) {
  std::string error;
  EXPECT_FALSE(parse_json_text(R"({"a\nb": [{"c\"d\\e\u001b": 1e309}]})", "m.json", error));
  EXPECT_EQ(error, R"(m.json: field "a\x0ab[0].c\"d\\e\x1b" holds a number out of range (1e309))");
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST(JsonFile, FileWithHugeNumberIsAnErrorNotAnAbort) {
  testing::TempDir dir;
  std::string path = dir.write("m.json", R"({"name": "x", "hidden": 4096, "seq": 1e309})");
  std::string error;
  EXPECT_FALSE(read_json_file(path, error));
  EXPECT_EQ(error, path + ": field \"seq\" holds a number out of range (1e309)");
}

// An endless file used to be read until memory ran out (std::bad_alloc).
TEST(JsonFile, EndlessFileIsRefusedAtTheSizeLimit) {
  std::string error;
  EXPECT_FALSE(read_json_file("/dev/zero", error));
  EXPECT_EQ(error, "/dev/zero: larger than 64 MiB, not a planner input");
}

TEST(JsonFile, NestingIsBounded) {
  std::string error;
  std::string deep(100000, '[');
  EXPECT_FALSE(parse_json_text(deep, "d.json", error));
  EXPECT_EQ(error, "d.json: nesting deeper than 64 levels");
  std::string ok = std::string(10, '[') + std::string(10, ']');
  EXPECT_TRUE(parse_json_text(ok, "d.json", error)) << error;
}

TEST(JsonFile, SyntaxErrorsGiveTheByte) {
  std::string error;
  EXPECT_FALSE(parse_json_text("{\"a\": tru}", "s.json", error));
  EXPECT_TRUE(error.starts_with("s.json: not valid JSON (at byte ")) << error;
  EXPECT_FALSE(parse_json_text("", "e.json", error));
  EXPECT_TRUE(error.starts_with("e.json: not valid JSON")) << error;
  EXPECT_FALSE(parse_json_text(std::string("{\"a\": \"\xff\"}"), "u.json", error));  // invalid UTF-8
  EXPECT_TRUE(error.starts_with("u.json: not valid JSON")) << error;
}

}  // namespace
}  // namespace stepscope::model
