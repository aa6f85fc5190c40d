// libFuzzer entry point for `plan validate`'s CSV reader: the bytes are the
// file. A bad file must be refused with one error line; a bad row skipped
// with one line naming row and column; every row is either predicted or
// skipped; nothing may crash, throw or hang; every prediction and relative
// error must be finite.
//
//   ./build-fuzz/fuzz/fuzz_plan_csv -max_total_time=60 fuzz/corpus_fuzz_plan_csv   (docs/fuzzing.md)
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "plan/plan_validation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepscope::plan;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string error;
  ValidationOptions o;
  auto rows = parse_validation_csv(text, o, error);
  if (!rows) {
    if (error.empty() || error.find('\n') != std::string::npos) std::abort();
    return 0;
  }
  const ValidationSummary summary = validate_rows(*rows, o);
  if (summary.results.size() + summary.skipped.size() != rows->rows.size() + rows->skipped.size()) std::abort();
  for (const SkippedRow& k : summary.skipped)
    if (k.reason.empty() || k.reason.find('\n') != std::string::npos) std::abort();
  for (const ValidationResult& r : summary.results)
    if (!std::isfinite(r.predicted) || !(r.predicted > 0) || !std::isfinite(r.error_pct) ||
        !std::isfinite(r.memory_error_pct))
      std::abort();
  for (double v : {summary.step_mean_abs_pct, summary.step_max_abs_pct, summary.layer_mean_abs_pct,
                   summary.layer_max_abs_pct, summary.memory_mean_abs_pct, summary.memory_max_abs_pct})
    if (!std::isfinite(v)) std::abort();
  return 0;
}
