#include "analysis/name_patterns.h"

#include <algorithm>
#include <stdexcept>

namespace stepscope::analysis {

NamePatterns::NamePatterns(std::span<const NamePattern> patterns, bool fold_case)
    : patterns_(patterns.begin(), patterns.end()), starts_(65536 / 64, 0), bucket_begin_(kBuckets + 1, 0) {
  for (size_t c = 0; c < 256; ++c)
    fold_[c] = static_cast<unsigned char>(fold_case && c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
  std::vector<uint32_t> contains;
  for (uint32_t i = 0; i < patterns_.size(); ++i) {
    const NamePattern& p = patterns_[i];
    if (p.text.size() < 2) throw std::invalid_argument("NamePatterns: a pattern needs at least 2 bytes");
    if (fold_case && std::any_of(p.text.begin(), p.text.end(), [](char c) { return c >= 'A' && c <= 'Z'; }))
      throw std::invalid_argument("NamePatterns: patterns of a case-folding set must be lower case");
    (p.match == Match::kContains ? contains : anchored_).push_back(i);
  }
  // Counting sort of the substring patterns by bucket; within a bucket they
  // stay in list order.
  auto key_of = [&](uint32_t i) { return pair_key(patterns_[i].text[0], patterns_[i].text[1]); };
  for (uint32_t i : contains) {
    starts_[key_of(i) / 64] |= uint64_t{1} << (key_of(i) % 64);
    ++bucket_begin_[bucket(key_of(i)) + 1];
  }
  for (size_t b = 0; b < kBuckets; ++b) bucket_begin_[b + 1] += bucket_begin_[b];
  by_bucket_.resize(contains.size());
  std::vector<uint32_t> next(bucket_begin_.begin(), bucket_begin_.end() - 1);
  for (uint32_t i : contains) by_bucket_[next[bucket(key_of(i))]++] = i;
}

bool NamePatterns::equal_at(std::string_view name, size_t at, std::string_view pattern) const {
  if (name.size() - at < pattern.size()) return false;
  for (size_t k = 0; k < pattern.size(); ++k)
    if (fold_[static_cast<unsigned char>(name[at + k])] != static_cast<unsigned char>(pattern[k])) return false;
  return true;
}

size_t NamePatterns::first_match(std::string_view name) const {
  size_t best = kNoMatch;
  for (uint32_t i : anchored_) {
    if (i >= best) break;  // anchored_ is in list order
    const NamePattern& p = patterns_[i];
    if (p.text.size() > name.size()) continue;
    if (equal_at(name, p.match == Match::kPrefix ? 0 : name.size() - p.text.size(), p.text)) best = i;
  }
  if (by_bucket_.empty() || name.size() < 2) return best;
  for (size_t at = 0; at + 1 < name.size() && best != 0; ++at) {
    const size_t key = pair_key(name[at], name[at + 1]);
    if (!((starts_[key / 64] >> (key % 64)) & 1)) continue;
    const size_t b = bucket(key);
    for (uint32_t k = bucket_begin_[b]; k < bucket_begin_[b + 1]; ++k) {
      const uint32_t i = by_bucket_[k];
      if (i >= best) break;  // a bucket is in list order
      if (equal_at(name, at, patterns_[i].text)) best = i;
    }
  }
  return best;
}

}  // namespace stepscope::analysis
