// The interning table hands out dense ids, one per distinct text, however
// many strings there are (the index grows and rehashes) and whatever they
// hold: long shared prefixes (templated kernel names), lengths around the
// 8-byte words the hash reads, embedded NULs.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "trace/string_table.h"

namespace stepscope::trace {
namespace {

std::vector<std::string> distinct_texts() {
  std::vector<std::string> texts;
  const std::string prefix = "void at::native::vectorized_elementwise_kernel<8, at::native::FillFunctor<";
  for (int i = 0; i < 40000; ++i) texts.push_back(prefix + std::to_string(i) + ">(int)");
  for (int len = 1; len <= 40; ++len)
    for (char c : {'a', 'b', '\0'}) texts.push_back(std::string(static_cast<size_t>(len), c));
  for (int i = 0; i < 1000; ++i) texts.push_back(std::string("x\0y", 3) + std::to_string(i));
  return texts;
}

TEST(StringTable, OneDenseIdPerDistinctText) {
  StringTable t;
  EXPECT_EQ(t.intern(""), 0u);
  const auto texts = distinct_texts();
  std::vector<StringId> ids;
  for (const auto& s : texts) ids.push_back(t.intern(s));
  ASSERT_EQ(t.size(), texts.size() + 1);
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(ids[i], i + 1) << "ids are handed out in order of first sight";
    EXPECT_EQ(t.get(ids[i]), texts[i]);
    EXPECT_EQ(t.find(texts[i]), ids[i]);
    EXPECT_EQ(t.intern(texts[i]), ids[i]) << "interning again returns the same id";
  }
  EXPECT_EQ(t.size(), texts.size() + 1) << "nothing added by the second pass";
  EXPECT_EQ(t.find("not interned"), StringTable::kMissing);
  EXPECT_EQ(t.find(std::string("x\0y", 3)), StringTable::kMissing);
  EXPECT_EQ(t.get(0), "");
  EXPECT_EQ(t.find(""), 0u);
}

TEST(StringTable, ViewsStayValidWhileTheTableGrows) {
  StringTable t;
  StringId first = t.intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  std::string_view view = t.get(first);
  const char* data = view.data();
  for (int i = 0; i < 100000; ++i) t.intern("op" + std::to_string(i));
  EXPECT_EQ(t.get(first).data(), data);
  EXPECT_EQ(t.get(first), "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
}

// The arena grows from small blocks to 64 KiB ones; a text larger than a
// block gets a block of its own. Texts of random sizes across every kind of
// boundary read back exactly, at the address they were first stored at.
TEST(StringTable, TextsOfAnySizeReadBackAcrossArenaBlocks) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  StringTable t;
  std::vector<std::string> texts;
  std::vector<StringId> ids;
  std::vector<const char*> where;
  for (int i = 0; i < 3000; ++i) {
    size_t n = std::uniform_int_distribution<size_t>(1, 9000)(rng);
    if (i == 1500) n = 200 * 1024;  // larger than any block
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>('a' + rng() % 26);
    s += "#" + std::to_string(i);  // distinct
    ids.push_back(t.intern(s));
    where.push_back(t.get(ids.back()).data());
    texts.push_back(std::move(s));
  }
  for (size_t i = 0; i < texts.size(); ++i) {
    ASSERT_EQ(t.get(ids[i]), texts[i]) << i;
    ASSERT_EQ(t.get(ids[i]).data(), where[i]) << i;
    ASSERT_EQ(t.intern(texts[i]), ids[i]) << i;
  }
}

}  // namespace
}  // namespace stepscope::trace
