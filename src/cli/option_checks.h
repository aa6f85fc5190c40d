// CLI11 validators for numeric options: the text must be a number of the
// right kind inside a documented range, checked before any work. A failure
// names the option and the value ("--gpus: expected a whole number from 1 to
// 16777216, got \"-4\"") and exits non-zero (CLI11's validation error).
#pragma once

#include <cstdint>

#include <CLI/CLI.hpp>

namespace stepscope::cli {

// A whole number (decimal digits, optional sign) from `lo` to `hi`.
CLI::Validator whole_number(int64_t lo, int64_t hi);

// A finite decimal number above `lo` (strictly) and at most `hi`.
CLI::Validator number_above(double lo, double hi);

}  // namespace stepscope::cli
