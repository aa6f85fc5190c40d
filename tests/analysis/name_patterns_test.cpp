// NamePatterns must decide exactly what trying its patterns one by one
// (lower-casing the name first when it folds case) decides: checked against
// that plain loop on random names built to hit, nearly hit and overlap the
// patterns, in both case modes.
#include "analysis/name_patterns.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace stepscope::analysis {
namespace {

size_t first_match_one_by_one(const std::vector<NamePattern>& patterns, std::string name, bool fold_case) {
  if (fold_case)
    for (char& c : name)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  for (size_t i = 0; i < patterns.size(); ++i) {
    const NamePattern& p = patterns[i];
    const bool hit = p.match == Match::kPrefix   ? name.starts_with(p.text)
                     : p.match == Match::kSuffix ? name.ends_with(p.text)
                                                 : name.find(p.text) != std::string::npos;
    if (hit) return i;
  }
  return NamePatterns::kNoMatch;
}

// Overlapping words (gemm inside sgemm and implicit_gemm), patterns sharing
// their first two bytes, anchored and unanchored copies of one word, a
// pattern that is another's prefix, and non-letters.
const std::vector<NamePattern> kPatterns = {
    {Match::kPrefix, "triton"},      {Match::kContains, "implicit_gemm"}, {Match::kContains, "flash"},
    {Match::kContains, "gemm"},      {Match::kContains, "sgemm"},         {Match::kSuffix, "sync"},
    {Match::kContains, "ge"},        {Match::kContains, "cub::"},         {Match::kContains, "cu"},
    {Match::kPrefix, "fc-"},         {Match::kContains, "_norm"},         {Match::kContains, "norm"},
    {Match::kSuffix, "synchronize"}, {Match::kContains, "-dtype_"},       {Match::kContains, "reduce"},
    {Match::kContains, "red"},       {Match::kPrefix, "void "},           {Match::kContains, "\xc3\xa9t"},
};

std::string random_name(std::mt19937_64& rng) {
  static const std::vector<std::string> pieces = {
      "triton", "TRITON_", "implicit_gemm", "Implicit_GEMM", "gem", "gemm", "sGeMm", "flas", "FLASH", "sync",
      "Sync", "synchroniz", "SYNCHRONIZE", "cub:", "cub::", "CU", "fc-", "FC-", "_norm", "NoRm", "-dtype_",
      "reduc", "REDUCE", "red", "void ", "VOID ", "\xc3\xa9t", "\xc3\x89T", "<", ">", "::", " ", "_", "x", "Z"};
  std::uniform_int_distribution<int> n_pieces(0, 40), which(0, static_cast<int>(pieces.size()) - 1), byte(0, 255),
      kind(0, 3);
  std::string name;
  for (int n = n_pieces(rng); n > 0; --n) {
    if (kind(rng) == 0) name += static_cast<char>(byte(rng));  // any byte, NUL and non-ASCII included
    else name += pieces[which(rng)];
  }
  return name;
}

TEST(NamePatterns, FirstMatchEqualsTryingEachPatternInOrder) {
  std::mt19937_64 rng(std::random_device{}());
  for (bool fold_case : {true, false}) {
    std::vector<NamePattern> patterns = kPatterns;
    if (!fold_case) patterns.push_back({Match::kContains, "GEMM"});  // upper case only where case counts
    const NamePatterns set(patterns, fold_case);
    size_t matched = 0;
    for (int i = 0; i < 50000; ++i) {
      const std::string name = random_name(rng);
      const size_t expected = first_match_one_by_one(patterns, name, fold_case);
      ASSERT_EQ(set.first_match(name), expected) << "fold_case " << fold_case << ", name '" << name << "'";
      matched += expected != NamePatterns::kNoMatch;
    }
    // The generator must exercise both outcomes, or the comparison proves little.
    EXPECT_GT(matched, 10000u);
    EXPECT_LT(matched, 50000u);
  }
}

TEST(NamePatterns, AnchorsAndEdges) {
  const NamePatterns set(kPatterns, /*fold_case=*/true);
  EXPECT_EQ(set.first_match(""), NamePatterns::kNoMatch);
  EXPECT_EQ(set.first_match("g"), NamePatterns::kNoMatch);
  EXPECT_EQ(set.first_match("GE"), 6u);
  EXPECT_EQ(set.first_match("x_triton"), NamePatterns::kNoMatch);  // prefix only at the start
  EXPECT_EQ(set.first_match("Triton_poi"), 0u);
  EXPECT_EQ(set.first_match("Event Sync"), 5u);
  EXPECT_EQ(set.first_match("Sync Event"), NamePatterns::kNoMatch);  // suffix only at the end
  EXPECT_EQ(set.first_match("ampere_sgemm_128x64"), 3u);              // gemm is listed before sgemm
  EXPECT_EQ(set.first_match("fc"), NamePatterns::kNoMatch);           // shorter than "fc-"
  EXPECT_EQ(set.first_match("FC-1"), 9u);
}

TEST(NamePatterns, RejectsPatternsItCannotMatchFaithfully) {
  EXPECT_THROW(NamePatterns(std::vector<NamePattern>{{Match::kContains, "x"}}, false), std::invalid_argument);
  EXPECT_THROW(NamePatterns(std::vector<NamePattern>{{Match::kContains, "Gemm"}}, true), std::invalid_argument);
  EXPECT_NO_THROW(NamePatterns(std::vector<NamePattern>{{Match::kContains, "Gemm"}}, false));
}

}  // namespace
}  // namespace stepscope::analysis
