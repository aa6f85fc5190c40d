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
#include <optional>
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

// A table of naming rules: each rule is a pattern and the value a name that
// matches it gets; the first rule in table order that matches decides (one
// pass over the name, NamePatterns). Kernel classes, compute families, matmul
// paths and the precision a kernel's name states are such tables.
template <typename Value>
struct NameRule {
  NamePattern pattern;
  Value value;
};

template <typename Value>
class NameRules {
 public:
  NameRules(std::span<const NameRule<Value>> rules, bool fold_case)
      : values_(values_of(rules)), patterns_(patterns_of(rules), fold_case) {}

  // The value of the first rule that matches `name`, if one does.
  std::optional<Value> match(std::string_view name) const {
    const size_t rule = patterns_.first_match(name);
    if (rule == NamePatterns::kNoMatch) return std::nullopt;
    return values_[rule];
  }

 private:
  static std::vector<Value> values_of(std::span<const NameRule<Value>> rules) {
    std::vector<Value> v;
    for (const auto& r : rules) v.push_back(r.value);
    return v;
  }
  static std::vector<NamePattern> patterns_of(std::span<const NameRule<Value>> rules) {
    std::vector<NamePattern> p;
    for (const auto& r : rules) p.push_back(r.pattern);
    return p;
  }

  std::vector<Value> values_;
  NamePatterns patterns_;
};

}  // namespace stepscope::analysis
