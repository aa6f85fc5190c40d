// The one orchestrator of `stepscope memory`, shared by the CLI and the
// Python package: read a snapshot (and a trace of the same run to join it
// with), build the report, and derive the findings; also the findings of a
// snapshot given to `stepscope analyze --memory-snapshot`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "diagnose/diagnose.h"
#include "diagnose/finding.h"
#include "memory/snapshot_report.h"
#include "trace/event_store.h"

namespace stepscope::pipeline {

struct MemoryRun {
  bool ok = false;
  std::string error;       // one line naming the file, when !ok
  std::string error_file;  // the snapshot or the trace
  int64_t error_byte = -1; // where in the trace's JSON text, when known
  memory::MemoryReport report;
  std::vector<diagnose::Finding> findings;  // snapshot_findings.h, highest severity first
};

// `trace_path`: "" for none. Never throws for bad input.
MemoryRun run_memory(const std::string& snapshot_path, const std::string& trace_path, size_t top_sites = 20);

// The findings of `report` on `rank`; `trace` (may be null) is the trace
// the report was joined with: its deviceProperties give the devices' sizes
// and its clock the examples' times.
std::vector<diagnose::Finding> memory_findings(const memory::MemoryReport& report, const trace::EventStore* trace,
                                               int64_t rank);

// `analyze --memory-snapshot [RANK=]FILE`: each snapshot read, joined with
// its rank's trace (the only rank when RANK= is left out), and its findings
// added to the diagnosis: medium and high severity among the findings, low
// among the minor ones. Returns "" or a one-line error naming the snapshot
// or the option (error_file: the file it is about).
std::string add_snapshot_findings(const std::vector<std::string>& specs,
                                  const std::vector<const trace::EventStore*>& stores, diagnose::Diagnosis& diagnosis,
                                  std::string& error_file);

}  // namespace stepscope::pipeline
