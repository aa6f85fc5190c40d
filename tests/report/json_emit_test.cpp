// TextEmit writes a value as nlohmann's serializer does, pretty and compact,
// for what its own formatting covers: strings that need escaping or are not
// ASCII, numbers at their limits and not finite, empty and nested containers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "report/json_emit.h"

namespace stepscope::report {
namespace {

using nlohmann::ordered_json;

std::string written(const ordered_json& v, int indent, unsigned depth) {
  std::string out;
  TextEmit e(out, indent, depth);
  e.value(v);
  return out;
}

std::string dumped(const ordered_json& v, int indent, unsigned depth) {
  std::string out;
  nlohmann::detail::serializer<ordered_json> s(nlohmann::detail::output_adapter<char>(out), ' ');
  s.dump(v, indent >= 0, false, indent >= 0 ? static_cast<unsigned>(indent) : 0, depth);
  return out;
}

TEST(JsonEmit, TreesAreWrittenAsTheSerializerWritesThem) {
  ordered_json v;
  v["plain"] = "kernel<float, 4>::run";
  v["escaped"] = "a \"quote\", a \\ backslash, a\ttab, a\nnewline, \x01 and \x7f";
  v["utf8"] = "d\xc3\xa9j\xc3\xa0 vu \xe2\x86\x92";
  v["key \"quoted\""] = 1;
  v["ints"] = {0, -1, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  v["unsigned"] = std::numeric_limits<uint64_t>::max();
  v["floats"] = {0.0, -0.0, 0.1, 1e-7, 1.5e300, 123456789.0, 1e21, 3.0};
  v["not_finite"] = {std::nan(""), std::numeric_limits<double>::infinity()};
  v["flags"] = {true, false, nullptr};
  v["empty"] = {{"object", ordered_json::object()}, {"array", ordered_json::array()}};
  v["nested"] = {{"a", {{{"b", {1, {2, 3}}}}}}};
  for (int indent : {-1, 0, 1, 2, 4})
    for (unsigned depth : {0u, 4u}) EXPECT_EQ(written(v, indent, depth), dumped(v, indent, depth)) << indent;
}

TEST(JsonEmit, ScalarsByTypeAsTheirTreeValue) {
  const auto both = [](auto x) {
    std::string text;
    TextEmit t(text, 2, 0);
    TreeEmit tree;
    for (JsonEmit* e : {static_cast<JsonEmit*>(&t), static_cast<JsonEmit*>(&tree)}) {
      e->begin_object();
      e->member("x", x);
      e->end();
    }
    EXPECT_EQ(text, tree.take().dump(2));
  };
  both(true);
  both(-3);
  both(7u);
  both(size_t{1} << 40);
  both(0.25f);
  both(2.0 / 3.0);
  both(std::string("s\"q"));
  both("literal");
  both(std::string_view("view"));
  both(std::vector<std::string>{"a", "b\\c"});
}

TEST(JsonEmit, TextThatIsNotUtf8ThrowsAsTheSerializerDoes) {
  EXPECT_THROW((void)written(ordered_json("bad \xff byte"), 2, 0), ordered_json::type_error);
}

}  // namespace
}  // namespace stepscope::report
