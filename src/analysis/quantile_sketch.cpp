#include "analysis/quantile_sketch.h"

#include <algorithm>
#include <cmath>


namespace stepscope::analysis {

namespace {

const double kGamma = (1 + QuantileSketch::kRelativeError) / (1 - QuantileSketch::kRelativeError);
const double kLogGamma = std::log(kGamma);
// Counts that stop at the top instead of wrapping (a merge of many sketches).
uint64_t add_counts(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

// Indices of values from 1 ns to 2^63 ns: ceil(63 ln 2 / ln gamma) = 2,184.
constexpr int32_t kMaxIndex = 4096;

}  // namespace

int32_t QuantileSketch::index_of(int64_t value_ns) {
  return static_cast<int32_t>(std::ceil(std::log(static_cast<double>(value_ns)) / kLogGamma));
}

void QuantileSketch::add(int64_t value_ns) {
  value_ns = std::max<int64_t>(value_ns, 0);
  if (count() == 0 || value_ns < min_) min_ = value_ns;
  if (count() == 0 || value_ns > max_) max_ = value_ns;
  if (value_ns == 0) {
    ++zeros_;
    return;
  }
  const int32_t i = index_of(value_ns);
  auto it = std::lower_bound(buckets_.begin(), buckets_.end(), i,
                             [](const std::pair<int32_t, uint64_t>& b, int32_t k) { return b.first < k; });
  if (it != buckets_.end() && it->first == i)
    ++it->second;
  else
    buckets_.insert(it, {i, 1});
  ++in_buckets_;
}

void QuantileSketch::merge(const QuantileSketch& other) {
  if (other.count() == 0) return;
  if (count() == 0 || other.min_ < min_) min_ = other.min_;
  if (count() == 0 || other.max_ > max_) max_ = other.max_;
  zeros_ = add_counts(zeros_, other.zeros_);
  in_buckets_ = add_counts(in_buckets_, other.in_buckets_);
  std::vector<std::pair<int32_t, uint64_t>> out;
  out.reserve(buckets_.size() + other.buckets_.size());
  auto a = buckets_.cbegin();
  auto b = other.buckets_.cbegin();
  while (a != buckets_.cend() || b != other.buckets_.cend()) {
    if (b == other.buckets_.cend() || (a != buckets_.cend() && a->first < b->first)) {
      out.push_back(*a++);
    } else if (a == buckets_.cend() || b->first < a->first) {
      out.push_back(*b++);
    } else {
      out.push_back({a->first, add_counts(a->second, b->second)});
      ++a;
      ++b;
    }
  }
  buckets_ = std::move(out);
}

double QuantileSketch::quantile(double q) const {
  const uint64_t n = count();
  if (n == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const auto rank = static_cast<uint64_t>(std::floor(q * static_cast<double>(n - 1)));
  if (rank < zeros_) return 0;
  uint64_t seen = zeros_;
  for (const auto& [i, c] : buckets_) {
    seen = add_counts(seen, c);
    if (rank < seen) {
      const double v = 2 * std::pow(kGamma, i) / (kGamma + 1);
      return std::clamp(v, static_cast<double>(min_), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

bool QuantileSketch::restore(uint64_t zeros, std::vector<std::pair<int32_t, uint64_t>> buckets, int64_t min,
                             int64_t max) {
  *this = QuantileSketch{};
  uint64_t total = 0;
  for (size_t k = 0; k < buckets.size(); ++k) {
    const auto [i, c] = buckets[k];
    if (c == 0 || i < -kMaxIndex || i > kMaxIndex || (k > 0 && buckets[k - 1].first >= i)) return false;
    total = add_counts(total, c);
  }
  if (min < 0 || min > max) return false;
  zeros_ = zeros;
  in_buckets_ = total;
  buckets_ = std::move(buckets);
  min_ = min;
  max_ = max;
  return true;
}

}  // namespace stepscope::analysis
