#include "summary/summarize.h"

#include "diagnose/rank_parts.h"
#include "summary/summary_json.h"

#include "report/analyze_report.h"
#include "trace/process_windows.h"
#include "trace/trace_set.h"

namespace stepscope::summary {

namespace {

// What analyze's diagnosis would use: the given options with the summary's
// analysis options, and every remedy replayed as it is collected.
diagnose::DiagnoseOptions diagnosis_options(const SummarizeOptions& options) {
  diagnose::DiagnoseOptions d = options.diagnosis;
  d.analysis = options.analysis;
  d.replay_as_collected = true;
  return d;
}

SummarySettings settings_of(const SummarizeOptions& options) {
  return {options.analysis, options.read.salvage, diagnosis_settings(diagnosis_options(options))};
}

SummarizeResult failed(std::string error, std::string file) {
  SummarizeResult r;
  r.error = std::move(error);
  r.error_file = std::move(file);
  return r;
}

// The rank as the set would see it, numbered as if it were alone; a rank in
// the file name is read from `name`, the name the user knows the file by.
// Its detector parts are collected as analyze collects them.
void fill_rank(RankSummary& s, trace::EventStore& store, const std::string& name, const SummarizeOptions& options) {
  trace::RankClaim claim = trace::rank_claim(store);
  claim.from_file_name = trace::rank_from_file_name(name);
  std::vector<std::string> unused;
  const trace::NumberedRank alone = trace::number_ranks({claim}, unused).front();
  store.rank = alone.rank;
  store.rank_source = alone.source;
  s.kind = SummaryKind::kRank;
  s.declared_rank = claim.declared;
  s.file_name_rank = claim.from_file_name;
  s.process = trace::process_identity(store);
  s.analysis = analysis::analyze_rank(store, options.analysis);
  s.ranks_in_set = options.ranks_in_set;
  diagnose::CollectedRank collected = diagnose::collect_rank_parts(
      store, s.analysis, diagnosis_options(options), options.ranks_in_set > 0 ? options.ranks_in_set : 1);
  s.diagnosis = nlohmann::json::to_cbor(collected.parts);
  s.rank_diagnosis = std::move(collected.report);
}

// Every mention of `from` (the file read) becomes `to` (the name the user knows it by).
void rename_file(RankSummary& s, const std::string& from, const std::string& to) {
  auto replace_in = [&](std::string& text) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  };
  for (std::string& f : s.files) replace_in(f);
  for (std::string& n : s.notes) replace_in(n);
  for (std::string& w : s.warnings) replace_in(w);
  replace_in(s.analysis.source_path);
}

// A single file in a set: the file's own outcome decides (trace_set.cpp's rules for one file).
SummarizeResult summarize_member(const std::string& path, const SummarizeOptions& options) {
  SummarizeResult r;
  RankSummary& s = r.summary;
  s.tool_version = report::kToolVersion;
  s.settings = settings_of(options);
  s.files = {path};
  trace::EventStore store;
  const trace::ReadOutcome o = trace::read_trace_file(path, store, options.read);
  s.uncompressed_bytes = o.uncompressed_bytes;
  s.file_bytes = o.file_bytes;
  if (o.not_a_trace) {
    s.kind = SummaryKind::kSkipped;
    s.notes.push_back("skipped " + o.error);
  } else if (!o.ok && options.read.salvage) {
    s.kind = SummaryKind::kDropped;
    s.warnings.push_back("dropped " + o.error);
  } else if (!o.ok) {
    SummarizeResult f = failed(o.error, path);
    if (!options.display_path.empty()) {
      if (f.error.starts_with(path)) f.error = options.display_path + f.error.substr(path.size());
      f.error_file = options.display_path;
    }
    return f;
  } else {
    if (o.salvaged) s.warnings.push_back("salvaged " + o.error);
    if (store.events.size() == 0) {
      s.kind = SummaryKind::kDropped;
      s.warnings.push_back("dropped " + path + ": no analysable event " + trace::nothing_analysable(store));
    } else {
      fill_rank(s, store, options.display_path.empty() ? path : options.display_path, options);
    }
  }
  if (!options.display_path.empty()) rename_file(s, path, options.display_path);
  r.ok = true;
  return r;
}

}  // namespace

SummarizeResult summarize_rank(const std::vector<std::string>& inputs, const SummarizeOptions& options) {
  if (options.analysis.timeline_builder)
    return failed("a summary is of the exact timeline: compatibility modes are not summarized", "");
  std::string error;
  const std::vector<std::string> files = trace::expand_inputs(inputs, error);
  if (!error.empty()) return failed(error, inputs.size() == 1 ? inputs.front() : "");
  if (files.empty()) return failed("no trace file among the inputs", "");
  if (options.member_of_set && files.size() == 1) return summarize_member(files.front(), options);
  if (!options.display_path.empty())
    return failed("a display name is for one file of a set (--member-of-set): " + std::to_string(files.size()) +
                      " files given",
                  "");

  trace::LoadResult loaded = trace::load_traces(files, options.read, 1);
  if (!loaded.ok) return failed(std::move(loaded.error), std::move(loaded.error_file));
  trace::TraceSet& set = loaded.set;
  if (set.ranks.size() != 1)
    return failed(std::to_string(files.size()) + " files hold " + std::to_string(set.ranks.size()) +
                      " ranks: a summary is of one rank (one file, or the profiling windows of one process)",
                  "");
  SummarizeResult r;
  RankSummary& s = r.summary;
  s.tool_version = report::kToolVersion;
  s.settings = settings_of(options);
  s.files = files;
  s.uncompressed_bytes = set.uncompressed_bytes;
  s.file_bytes = set.file_bytes;
  s.notes = set.notes;
  s.warnings = set.warnings;
  fill_rank(s, *set.ranks.front(), set.ranks.front()->source_path, options);
  r.ok = true;
  return r;
}

RankSummary unreadable_rank(const std::string& path, const std::string& error, const SummarizeOptions& options) {
  RankSummary s;
  s.tool_version = report::kToolVersion;
  s.kind = SummaryKind::kDropped;
  s.settings = settings_of(options);
  s.files = {options.display_path.empty() ? path : options.display_path};
  s.warnings.push_back("dropped " + error);
  return s;
}

}  // namespace stepscope::summary
