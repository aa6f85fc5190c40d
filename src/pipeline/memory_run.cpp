#include "pipeline/memory_run.h"

#include <algorithm>

#include <fmt/format.h>

#include "diagnose/detector_support.h"
#include "diagnose/snapshot_findings.h"
#include "trace/snapshot/snapshot_reader.h"
#include "trace/trace_reader.h"

namespace stepscope::pipeline {

std::vector<diagnose::Finding> memory_findings(const memory::MemoryReport& report, const trace::EventStore* trace,
                                               int64_t rank) {
  diagnose::SnapshotFindingsContext ctx;
  ctx.rank = rank;
  if (trace) {
    ctx.trace_base_time_ns = trace->meta.base_time_ns;
    for (const trace::DeviceProperties& p : trace->meta.devices) {
      if (p.id < 0 || p.id > 1024 || p.total_global_mem <= 0) continue;
      if (ctx.device_bytes.size() <= static_cast<size_t>(p.id)) ctx.device_bytes.resize(p.id + 1, 0);
      ctx.device_bytes[p.id] = static_cast<uint64_t>(p.total_global_mem);
    }
  }
  std::vector<diagnose::Finding> f = diagnose::snapshot_findings(report, ctx);
  std::stable_sort(f.begin(), f.end(), [](const auto& a, const auto& b) { return a.severity > b.severity; });
  return f;
}

MemoryRun run_memory(const std::string& snapshot_path, const std::string& trace_path, size_t top_sites) {
  MemoryRun run;
  const trace::snapshot::SnapshotReadResult r = trace::snapshot::read_memory_snapshot(snapshot_path);
  if (!r.snapshot) {
    run.error = r.error;
    run.error_file = snapshot_path;
    return run;
  }
  trace::EventStore store;
  if (!trace_path.empty()) {
    trace::ReadOptions options;
    options.gzip = trace::GzipBackend::kZlib;
    const trace::ReadOutcome read = trace::read_trace_file(trace_path, store, options);
    if (!read.ok) {
      run.error = read.error;
      run.error_file = trace_path;
      run.error_byte = read.error_byte;
      return run;
    }
  }
  const trace::EventStore* joined = trace_path.empty() ? nullptr : &store;
  run.report = memory::build_memory_report(*r.snapshot, snapshot_path, top_sites, 20, joined, trace_path);
  run.findings = memory_findings(run.report, joined, joined && joined->meta.rank ? *joined->meta.rank : 0);
  run.ok = true;
  return run;
}

namespace {

// "RANK=FILE" or "FILE": the rank (-1 when not given) and the file.
std::pair<int64_t, std::string> snapshot_spec(const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq > 9) return {-1, spec};
  for (size_t i = 0; i < eq; ++i)
    if (spec[i] < '0' || spec[i] > '9') return {-1, spec};
  return {std::stoll(spec.substr(0, eq)), spec.substr(eq + 1)};
}

}  // namespace

std::string add_snapshot_findings(const std::vector<std::string>& specs,
                                  const std::vector<const trace::EventStore*>& stores, diagnose::Diagnosis& diagnosis,
                                  std::string& error_file) {
  for (const std::string& spec : specs) {
    auto [rank, path] = snapshot_spec(spec);
    error_file = path;
    if (rank < 0 && stores.size() != 1)
      return fmt::format("--memory-snapshot {}: {} ranks were read; name the snapshot's rank as RANK={}", spec,
                         stores.size(), path);
    size_t index = 0;
    if (rank >= 0) {
      while (index < stores.size() && stores[index]->rank != rank) ++index;
      if (index == stores.size()) return fmt::format("--memory-snapshot {}: no trace of rank {} was read", spec, rank);
    }
    const trace::EventStore& store = *stores[index];
    const trace::snapshot::SnapshotReadResult r = trace::snapshot::read_memory_snapshot(path);
    if (!r.snapshot) return r.error;
    const memory::MemoryReport report = memory::build_memory_report(*r.snapshot, path, 20, 20, &store, store.source_path);
    for (diagnose::Finding& f : memory_findings(report, &store, store.rank)) {
      if (index < diagnosis.attribution.size())
        for (diagnose::Example& ex : f.evidence.examples)
          if (ex.timed) ex.step = diagnose::step_number_at(diagnosis.attribution[index], ex.ts_ns);
      (f.severity >= diagnose::Severity::kMedium ? diagnosis.findings : diagnosis.minor).push_back(std::move(f));
    }
  }
  error_file.clear();
  return "";
}

}  // namespace stepscope::pipeline
