// libFuzzer entry point for the rank-summary reader (`stepscope merge`). The
// input is a summary's body (CBOR): it is put in a well-formed file (header,
// deflate, checksum) so mutations reach the body's decoder rather than stop
// at the checksum; every fifth input also goes in as a whole file, header
// included. A refusal is one error line; nothing may crash, throw or hang.
// An accepted summary's detector parts are loaded, and it is merged as a set
// of one rank and rendered as JSON and terminal text.
//
//   ./build-fuzz/fuzz/fuzz_summary -max_total_time=60 fuzz/corpus_fuzz_summary   (docs/fuzzing.md)
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "diagnose/detector_registry.h"
#include "diagnose/rank_parts.h"
#include "pipeline/merge_run.h"
#include "report/json_report.h"
#include "report/terminal_report.h"
#include "summary/summary_file.h"
#include "summary/summary_json.h"

namespace {

void check(const stepscope::summary::DecodedSummary& d) {
  using namespace stepscope;
  if (!d.ok) {
    if (d.error.empty() || d.error.find('\n') != std::string::npos) std::abort();
    return;
  }
  // The detectors' parts, as the merge will load them: one error line or parts.
  if (d.summary.kind == summary::SummaryKind::kRank) {
    try {
      (void)diagnose::load_rank_parts(summary::diagnosis_parts(d.summary), diagnose::default_detectors(),
                                      d.summary.analysis.rank);
    } catch (const std::runtime_error& e) {
      if (std::string(e.what()).find('\n') != std::string::npos) std::abort();
    }
  }
  pipeline::MergedRun m = pipeline::merge_summaries({{"fuzz.stepscope-summary", d.summary}}, {"fuzz"});
  if (!m.ok) {
    if (m.error.empty() || m.error.find('\n') != std::string::npos) std::abort();
    return;
  }
  (void)report::build_analyze_json(m.report).dump();
  (void)report::render_terminal(m.report, {});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepscope::summary;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  if (size % 5 == 0) check(decode_summary(bytes));
  // The body in a well-formed container.
  const std::string file = wrap_summary_body(std::vector<uint8_t>(data, data + size));
  check(decode_summary(file));
  return 0;
}
