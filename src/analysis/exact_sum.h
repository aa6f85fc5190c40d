// A sum of doubles that does not depend on the order of its terms: the
// exact sum is kept as a short list of non-overlapping partials (Shewchuk's
// adaptive-precision addition, the algorithm of Python's math.fsum), and
// value() rounds it once. Sums of different ranks merge in any grouping to
// the same bits, which a plain `+=` does not give (floating-point addition is
// not associative).
//
//   ExactSum s;  s.add(0.1);  s.add(1e16);  s.add(-1e16);  s.value() == 0.1
#pragma once

#include <cstddef>
#include <vector>

namespace stepscope::analysis {

class ExactSum {
 public:
  void add(double x);
  void add(const ExactSum& other);
  // The exact sum rounded to the nearest double (ties to even). NaN when a
  // term was NaN or infinities of both signs were added; ±inf when one was.
  double value() const;

  // Its state, for a summary file: the partials and the non-finite sum.
  const std::vector<double>& partials() const { return partials_; }
  bool has_special() const { return has_special_; }
  double special() const { return special_; }
  // A sum restored from that state; false (and an empty sum) when it is not
  // one this class makes (more than kMaxPartials partials, a non-finite one,
  // a finite "special").
  bool restore(std::vector<double> partials, bool has_special, double special);

  static constexpr size_t kMaxPartials = 64;

 private:
  std::vector<double> partials_;  // increasing magnitude, non-overlapping
  double special_ = 0;            // the sum of the non-finite terms (inf/nan), 0 if none
  bool has_special_ = false;
};

}  // namespace stepscope::analysis
