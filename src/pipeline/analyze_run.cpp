#include "pipeline/analyze_run.h"

#include <algorithm>
#include <chrono>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "analysis/hta_compat/hta_release.h"
#include "analysis/hta_compat/run_hta_compat.h"
#include "diagnose/detector_registry.h"
#include "diagnose/diagnose.h"
#include "diagnose/rank_gpu.h"
#include "hwbench/profile_ceilings.h"
#include "hwbench/profile_json.h"
#include "pipeline/allocator_policy.h"
#include "pipeline/memory_run.h"
#include "pipeline/rank_workers.h"
#include "pipeline/cross_rank.h"
#include "trace/import_stats.h"

namespace stepscope::pipeline {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

bool fail(AnalyzedRun& run, std::string error, std::string file = {}, int64_t byte = -1) {
  run.ok = false;
  run.error = std::move(error);
  run.error_file = std::move(file);
  run.error_byte = byte;
  return false;
}

// The profile's ceilings, or the error naming the profile file.
bool read_ceilings(const std::string& path, AnalyzedRun& run) {
  std::string error;
  std::optional<model::HardwareProfile> profile = model::read_profile_file(path, error);
  if (!profile) {
    run.bad_option = true;
    return fail(run, error, path);
  }
  auto ceilings = std::make_unique<HardwareCeilings>();
  ceilings->profile = std::move(*profile);
  std::optional<model::GpuPeaks> peaks = hwbench::measured_peaks(ceilings->profile, error);
  if (!peaks) {
    run.bad_option = true;
    return fail(run, path + ": " + error, path);
  }
  ceilings->peaks = *peaks;
  run.ceilings = std::move(ceilings);
  return true;
}

// A profile of another GPU model would judge a trace against the wrong
// ceilings: it is still used (the caller asked for it), but said.
void warn_on_other_gpu(AnalyzedRun& run, const std::string& profile_path) {
  const model::GpuPeaks* profiled = model::find_gpu_peaks(run.ceilings->peaks.model);
  for (const trace::EventStore* s : run.report.stores) {
    const model::GpuPeaks* traced = diagnose::rank_gpu_peaks(*s);
    if (traced && traced != profiled)
      run.report.warnings.push_back(fmt::format("{}: the trace ran on {}, but --profile {} measured {}: its ceilings are used",
                                                s->source_path, traced->model, profile_path, run.ceilings->peaks.model));
  }
}

void run_compat_tables(report::AnalyzeReport& rep, analysis::hta::HtaRelease release) {
  rep.hta = analysis::hta::run_hta_compat(rep.stores, release);
  // HTA pools its kernel-type table over ranks; the report also shows each rank's own.
  if (rep.stores.size() == 1) {
    rep.hta_rank_kernel_types.push_back(rep.hta->kernel_type_breakdown);
    return;
  }
  for (const trace::EventStore* s : rep.stores)
    rep.hta_rank_kernel_types.push_back(analysis::hta::run_hta_compat(*s, release).kernel_type_breakdown);
}

// A misspelt name would silently run the detector the caller meant to skip.
std::string unknown_detector_error(const std::vector<std::string>& disabled) {
  std::vector<std::string> names;
  for (const diagnose::Detector& d : diagnose::default_detectors()) names.push_back(d.name);
  for (const std::string& name : disabled)
    if (std::find(names.begin(), names.end(), name) == names.end())
      return fmt::format("unknown detector '{}' (detectors: {})", name, fmt::join(names, ", "));
  return {};
}

}  // namespace

AnalyzedRun analyze_run(const std::vector<std::string>& inputs, const RunOptions& options) {
  AnalyzedRun run;
  report::AnalyzeReport& rep = run.report;
  rep.mode = options.compat.empty() ? "exact" : options.compat;
  rep.inputs = inputs;
  std::optional<analysis::hta::HtaRelease> release;
  if (!options.compat.empty()) {
    release = analysis::hta::release_of_compat_mode(options.compat);
    if (!release) {
      fail(run, "unknown compat mode '" + options.compat + "' (hta, hta-0.6.1, hta-0.5.0)");
      run.bad_option = true;
      return run;
    }
  }
  if (std::string e = unknown_detector_error(options.diagnosis.disabled_detectors); !e.empty()) {
    fail(run, std::move(e));
    run.bad_option = true;
    return run;
  }
  if (!options.hardware_profile_path.empty() && !read_ceilings(options.hardware_profile_path, run)) return run;

  if (options.tune_allocator) choose_allocator_policy(inputs, options.threads);
  const auto t0 = Clock::now();
  trace::LoadResult loaded = trace::load_traces(inputs, options.read, options.threads);
  const auto t1 = Clock::now();
  rep.read_seconds = seconds_between(t0, t1);
  if (!loaded.ok) {
    fail(run, std::move(loaded.error), std::move(loaded.error_file), loaded.error_byte);
    return run;
  }
  run.set = std::move(loaded.set);
  rep.notes = run.set.notes;
  rep.uncompressed_bytes = run.set.uncompressed_bytes;
  rep.file_bytes = run.set.file_bytes;
  for (const auto& s : run.set.ranks) rep.stores.push_back(s.get());

  rep.ranks = analyze_ranks_parallel(rep.stores, options.analysis, options.threads);
  CrossRankResult cross = finish_cross_rank(rep, run.set.warnings, options.analysis);
  if (!cross.error.empty()) {
    fail(run, std::move(cross.error), std::move(cross.error_file));
    return run;
  }
  run.set.warnings = rep.warnings;
  if (release) run_compat_tables(rep, *release);
  if (options.diagnose) {
    diagnose::DiagnoseOptions d = options.diagnosis;
    d.analysis = options.analysis;
    if (run.ceilings) {
      d.peaks_override = &run.ceilings->peaks;
      warn_on_other_gpu(run, options.hardware_profile_path);
    }
    const auto t2 = Clock::now();
    rep.diagnosis = diagnose::diagnose(rep.stores, rep.ranks, rep.multi, d);
    std::string snapshot_file;
    if (std::string e = add_snapshot_findings(options.memory_snapshots, rep.stores, *rep.diagnosis, snapshot_file);
        !e.empty()) {
      fail(run, std::move(e), std::move(snapshot_file));
      return run;
    }
    run.diagnose_seconds = seconds_between(t2, Clock::now());
  }
  rep.analysis_seconds = seconds_between(t1, Clock::now());
  run.ok = true;
  return run;
}

std::vector<std::string> warnings_to_show(const report::AnalyzeReport& report) {
  std::vector<std::string> out = report.warnings;
  for (const analysis::RankAnalysis& r : report.ranks)
    if (std::string w = trace::import_warning(r.origin.import); !w.empty()) out.push_back(r.source_path + ": " + w);
  return out;
}

std::vector<std::string> warnings_to_show(const AnalyzedRun& run) { return warnings_to_show(run.report); }

}  // namespace stepscope::pipeline
