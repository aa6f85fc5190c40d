// The one orchestrator of a trace set's analysis, shared by `stepscope
// analyze`, `stepscope diff`, the Python package and anything else that reads
// traces: load the files (folders, globs), analyse each rank in parallel,
// compare ranks, run the compatibility tables and the diagnosis, and hand
// back what every renderer takes. Front ends parse their arguments and write
// outputs; they decide nothing about the analysis.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis_options.h"
#include "diagnose/diagnose_options.h"
#include "model/gpu_table.h"
#include "model/hardware_profile.h"
#include "report/analyze_report.h"
#include "trace/trace_reader.h"
#include "trace/trace_set.h"

namespace stepscope::pipeline {

struct RunOptions {
  trace::ReadOptions read;
  unsigned threads = 0;  // ranks read and analysed in parallel; 0 = hardware threads
  analysis::AnalysisOptions analysis;
  // "" = exact; "hta", "hta-0.6.1", "hta-0.5.0" add that release's tables.
  std::string compat;
  // A hardware profile of `stepscope bench`: its measured ceilings replace
  // the datasheet peaks for every rank. Read before any trace: a bad profile
  // fails fast.
  std::string hardware_profile_path;
  bool diagnose = true;  // false: stop after the analyses (no diagnosis)
  // Its `analysis` member is overwritten with `analysis`, its
  // `peaks_override` with the hardware profile's ceilings.
  diagnose::DiagnoseOptions diagnosis;
  // Sets glibc's mmap threshold for this process from the file and thread
  // counts (allocator_policy.h). A library caller that shares the process
  // with other work (Python) may leave the process's allocator alone.
  bool tune_allocator = true;
  // Memory snapshots of the run, "[RANK=]FILE" (analyze --memory-snapshot):
  // their findings join the diagnosis (memory_run.h).
  std::vector<std::string> memory_snapshots;
};

// A hardware profile and the peak rates measured in it; the peaks' model
// name views the profile's text, so both live in one place.
struct HardwareCeilings {
  model::HardwareProfile profile;
  model::GpuPeaks peaks;
};

struct AnalyzedRun {
  bool ok = false;
  std::string error;           // one line naming the file, when !ok
  std::string error_file;      // the file or input the error is about ("" when none is)
  int64_t error_byte = -1;     // where in that file's JSON text, when known
  bool bad_option = false;     // the error is about an option (detector, compat mode, hardware profile), not a trace
  trace::TraceSet set;         // owns the stores the report points into
  // The hardware profile's ceilings; the diagnosis was run against them.
  std::unique_ptr<HardwareCeilings> ceilings;
  report::AnalyzeReport report;  // everything the renderers take
  double diagnose_seconds = 0;   // wall time of the diagnosis alone, s (inside report.analysis_seconds)
};

// Never throws for bad input: a file that cannot be read, a salvaged file with
// no whole step, a bad hardware profile or an unknown compat mode is `error`.
AnalyzedRun analyze_run(const std::vector<std::string>& inputs, const RunOptions& options);

// The warnings a front end shows: the run's own (salvage, clocks, dropped
// ranks, another GPU's profile) and each rank's import summary (records
// skipped or repaired), prefixed by its file.
std::vector<std::string> warnings_to_show(const AnalyzedRun& run);
// The same for a report made otherwise (stepscope merge).
std::vector<std::string> warnings_to_show(const report::AnalyzeReport& report);

}  // namespace stepscope::pipeline
