#include "analysis/exact_sum.h"

#include <cmath>

namespace stepscope::analysis {

void ExactSum::add(double x) {
  if (!std::isfinite(x)) {
    special_ = has_special_ ? special_ + x : x;
    has_special_ = true;
    return;
  }
  // Shewchuk's grow-expansion: each partial is added to x with its rounding
  // error kept, so the partials always sum exactly to every term so far.
  size_t i = 0;
  for (double y : partials_) {
    if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
    const double hi = x + y;
    const double lo = y - (hi - x);
    if (lo != 0.0) partials_[i++] = lo;
    x = hi;
  }
  partials_.resize(i);
  // The running sum overflowed: the total is infinite, like an infinite term.
  if (!std::isfinite(x)) {
    special_ = has_special_ ? special_ + x : x;
    has_special_ = true;
    return;
  }
  partials_.push_back(x);
}

void ExactSum::add(const ExactSum& other) {
  if (&other == this) {
    const ExactSum copy = other;
    add(copy);
    return;
  }
  for (double p : other.partials_) add(p);
  if (other.has_special_) add(other.special_);
}

bool ExactSum::restore(std::vector<double> partials, bool has_special, double special) {
  *this = ExactSum{};
  // Non-overlapping partials of doubles are at most ~40 (2,098 exponents /
  // 53 bits); more, or a non-finite one, is not a state this class makes.
  if (partials.size() > kMaxPartials) return false;
  for (double p : partials)
    if (!std::isfinite(p)) return false;
  if (has_special && std::isfinite(special)) return false;
  partials_ = std::move(partials);
  has_special_ = has_special;
  special_ = has_special ? special : 0.0;
  return true;
}

double ExactSum::value() const {
  if (has_special_) return special_;
  if (partials_.empty()) return 0.0;
  // Sum from the largest partial down; stop at the first inexact step, then
  // correct the rounding of a half-way case from the sign of what is left
  // (as math.fsum does).
  size_t n = partials_.size();
  double hi = partials_[--n];
  double lo = 0.0;
  while (n > 0) {
    const double x = hi;
    const double y = partials_[--n];
    hi = x + y;
    const double yr = hi - x;
    lo = y - yr;
    if (lo != 0.0) break;
  }
  if (n > 0 && ((lo < 0.0 && partials_[n - 1] < 0.0) || (lo > 0.0 && partials_[n - 1] > 0.0))) {
    const double y = lo * 2.0;
    const double x = hi + y;
    if (y == x - hi) hi = x;
  }
  return hi;
}

}  // namespace stepscope::analysis
