// An ordered list of name patterns (prefix / substring / suffix) matched
// against one name in a single pass: the first pattern in list order that
// matches wins, exactly as trying them one by one with starts_with / find /
// ends_with would decide. Kernel names run to thousands of characters
// (templated C++ kernels), and trying ~70 substrings one after another cost
// ~40k instructions per name; one pass that tests each position's two bytes
// against a bitmap of the patterns' first two bytes, and compares only where
// one may start, costs a few per byte.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace stepscope::analysis {

enum class Match : uint8_t { kPrefix, kContains, kSuffix };

struct NamePattern {
  Match match;
  std::string_view text;  // at least 2 bytes; lower case when the set folds case
};

class NamePatterns {
 public:
  static constexpr size_t kNoMatch = static_cast<size_t>(-1);

  // fold_case: ASCII letters of the name compare without case (what
  // lower-casing the name in the "C" locale and then matching does).
  NamePatterns(std::span<const NamePattern> patterns, bool fold_case);

  // The patterns of a rule table, in its order: `pattern_of(rule)` gives
  // each rule's NamePattern, so first_match's index is the rule's.
  template <typename Rules, typename PatternOf>
  static NamePatterns of_rules(const Rules& rules, PatternOf pattern_of, bool fold_case) {
    std::vector<NamePattern> patterns;
    for (const auto& rule : rules) patterns.push_back(pattern_of(rule));
    return NamePatterns(patterns, fold_case);
  }

  // Index in `patterns` of the first one that matches `name`, or kNoMatch.
  size_t first_match(std::string_view name) const;

 private:
  static constexpr size_t kBuckets = 256;
  // The folded bytes a, b as one 16-bit key.
  size_t pair_key(char a, char b) const {
    return size_t{fold_[static_cast<unsigned char>(a)]} << 8 | fold_[static_cast<unsigned char>(b)];
  }
  static size_t bucket(size_t key) { return (key ^ (key >> 7)) % kBuckets; }
  bool equal_at(std::string_view name, size_t at, std::string_view pattern) const;

  std::vector<NamePattern> patterns_;
  std::array<unsigned char, 256> fold_{};  // byte -> byte compared (ASCII lower case when folding)
  std::vector<uint32_t> anchored_;         // prefix and suffix patterns, in list order
  std::vector<uint64_t> starts_;           // bit per pair_key: a substring pattern begins with that pair
  std::vector<uint32_t> bucket_begin_;     // kBuckets + 1 offsets into by_bucket_
  std::vector<uint32_t> by_bucket_;        // substring patterns grouped by bucket(pair_key), in list order
};

}  // namespace stepscope::analysis
