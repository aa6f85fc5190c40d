#include "pipeline/merge_run.h"

#include <glob.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include <fmt/core.h>

#include "pipeline/cross_rank.h"
#include "pipeline/merge_diagnosis.h"
#include "summary/one_line.h"
#include "summary/summary_file.h"
#include "summary/summary_json.h"
#include "trace/rank_numbering.h"
#include "trace/trace_set.h"

namespace stepscope::pipeline {

namespace {

using summary::RankSummary;
using summary::SummaryKind;

MergedRun failed(std::string error, std::string file = {}) {
  MergedRun m;
  m.error = std::move(error);
  m.error_file = std::move(file);
  return m;
}

// The refusals: a merge must never pair what does not belong together.
std::string check_set(const std::vector<NamedSummary>& in, std::string& file) {
  const std::string settings = summary::settings_key(in.front().summary.settings);
  std::map<std::string, const std::string*> owner_of_file;
  for (const NamedSummary& n : in) {
    if (n.summary.tool_version != report::kToolVersion) {
      file = n.name;
      return fmt::format("{} was summarized by stepscope {}; this is stepscope {}: summarize the traces again with "
                         "this version",
                         n.name, summary::one_line(n.summary.tool_version, 40), report::kToolVersion);
    }
    if (summary::settings_key(n.summary.settings) != settings) {
      file = n.name;
      return fmt::format("{} and {} were summarized with different settings (analysis options or --salvage): "
                         "summarize every rank with the same options",
                         in.front().name, n.name);
    }
    for (const std::string& f : n.summary.files) {
      auto [it, fresh] = owner_of_file.emplace(f, &n.name);
      if (!fresh) {
        file = n.name;
        return fmt::format("{} and {} both summarize {}: each trace file belongs in one summary", *it->second, n.name,
                           summary::one_line(f, 200));
      }
    }
  }
  // One process in two summaries: the same trace twice (copies), or windows
  // of one process that `analyze` would read as one rank.
  for (size_t i = 0; i < in.size(); ++i) {
    const auto& a = in[i].summary.process;
    if (in[i].summary.kind != SummaryKind::kRank || !a) continue;
    for (size_t j = i + 1; j < in.size(); ++j) {
      const auto& b = in[j].summary.process;
      if (in[j].summary.kind != SummaryKind::kRank || !b) continue;
      file = in[j].name;
      if (a->pid == b->pid && a->process_name == b->process_name && a->rank == b->rank &&
          a->first_ns == b->first_ns && a->last_ns == b->last_ns)
        return fmt::format("{} and {} summarize the same rank's trace (pid {}, same time span): one of them is a copy",
                           in[i].name, in[j].name, a->pid);
      if (trace::same_process_later_window(*a, *b) || trace::same_process_later_window(*b, *a))
        return fmt::format("{} and {} are profiling windows of one process: summarize their trace files together "
                           "(stepscope summarize A.json B.json) to read them as one rank, as analyze does",
                           in[i].name, in[j].name);
      file.clear();
    }
  }
  return {};
}

// Files as given, a folder's *.stepscope-summary files, a pattern's matches;
// sorted, each once.
std::vector<std::string> expand_summary_inputs(const std::vector<std::string>& inputs, std::string& error) {
  std::vector<std::string> out;
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (std::filesystem::is_directory(in, ec)) {
      size_t found = 0;
      for (const auto& e : std::filesystem::directory_iterator(in, ec)) {
        const std::string p = e.path().string();
        if (p.ends_with(summary::kSummaryExtension)) {
          out.push_back(p);
          ++found;
        }
      }
      if (ec || found == 0) {
        error = in + (ec ? ": cannot list: " + ec.message() : ": folder holds no *" + std::string(summary::kSummaryExtension) + " files");
        return {};
      }
    } else if (in.find_first_of("*?[") != std::string::npos) {
      glob_t g{};
      const int rc = ::glob(in.c_str(), 0, nullptr, &g);
      for (size_t i = 0; rc == 0 && i < g.gl_pathc; ++i) out.push_back(g.gl_pathv[i]);
      globfree(&g);
      if (rc != 0) {
        error = in + ": no file matches";
        return {};
      }
    } else {
      out.push_back(in);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

MergedRun merge_summaries(std::vector<NamedSummary> summaries, std::vector<std::string> inputs) {
  if (summaries.empty()) return failed("no summary to merge");
  std::string file;
  if (std::string e = check_set(summaries, file); !e.empty()) return failed(std::move(e), std::move(file));
  // The order `analyze` reads the files in: by path.
  std::stable_sort(summaries.begin(), summaries.end(), [](const NamedSummary& a, const NamedSummary& b) {
    return a.summary.files.front() < b.summary.files.front();
  });

  MergedRun m;
  report::AnalyzeReport& rep = m.report;
  rep.mode = "exact";
  rep.inputs = std::move(inputs);
  rep.summaries = summaries.size();
  std::vector<std::string> warnings;
  std::vector<NamedSummary*> ranks;
  for (NamedSummary& n : summaries) {
    RankSummary& s = n.summary;
    rep.uncompressed_bytes += s.uncompressed_bytes;
    rep.file_bytes += s.file_bytes;
    for (auto& note : s.notes) rep.notes.push_back(std::move(note));
    for (auto& w : s.warnings) warnings.push_back(std::move(w));
    if (s.kind == SummaryKind::kRank) ranks.push_back(&n);
  }
  if (ranks.empty()) {
    const std::string why = !warnings.empty() ? warnings.front() : !rep.notes.empty() ? rep.notes.front() : "";
    return failed(fmt::format("no rank to analyse among the {} summaries{}{}", summaries.size(), why.empty() ? "" : ": ",
                              summary::one_line(why, 300)));
  }

  std::vector<trace::RankClaim> claims;
  for (const NamedSummary* n : ranks)
    claims.push_back({n->summary.analysis.source_path, n->summary.declared_rank, n->summary.file_name_rank});
  const std::vector<trace::NumberedRank> numbered = trace::number_ranks(claims, warnings);
  for (size_t i = 0; i < ranks.size(); ++i) {
    ranks[i]->summary.analysis.rank = numbered[i].rank;
    ranks[i]->summary.analysis.origin.rank_source = numbered[i].source;
  }
  std::stable_sort(ranks.begin(), ranks.end(), [](const NamedSummary* a, const NamedSummary* b) {
    return a->summary.analysis.rank < b->summary.analysis.rank;
  });
  for (NamedSummary* n : ranks) rep.ranks.push_back(std::move(n->summary.analysis));

  m.settings = summaries.front().summary.settings;
  CrossRankResult cross = finish_cross_rank(rep, std::move(warnings), m.settings.analysis);
  if (!cross.error.empty()) return failed(std::move(cross.error), std::move(cross.error_file));
  MergedDiagnosis diagnosis = merge_diagnosis(ranks, rep.ranks, rep.multi, m.settings);
  if (!diagnosis.error.empty()) return failed(std::move(diagnosis.error), std::move(diagnosis.error_file));
  rep.diagnosis = std::move(diagnosis.diagnosis);
  m.ok = true;
  return m;
}

MergedRun merge_summary_files(const std::vector<std::string>& paths, unsigned threads) {
  std::string error;
  const std::vector<std::string> files = expand_summary_inputs(paths, error);
  if (!error.empty()) return failed(std::move(error));
  std::vector<summary::DecodedSummary> decoded(files.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < files.size(); i = next++) decoded[i] = summary::read_summary_file(files[i]);
  };
  threads = static_cast<unsigned>(std::min<size_t>(trace::reading_threads(threads), files.size()));
  std::vector<std::thread> pool;
  const auto t0 = std::chrono::steady_clock::now();
  for (unsigned t = 1; t < threads; ++t) {
    try {  // a thread that cannot start leaves its files to the others
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;
    }
  }
  work();
  for (auto& t : pool) t.join();
  std::vector<NamedSummary> named;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!decoded[i].ok) return failed(std::move(decoded[i].error), files[i]);
    named.push_back({files[i], std::move(decoded[i].summary)});
  }
  const auto t1 = std::chrono::steady_clock::now();
  MergedRun m = merge_summaries(std::move(named), paths);
  m.report.read_seconds = std::chrono::duration<double>(t1 - t0).count();
  m.report.analysis_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  return m;
}

}  // namespace stepscope::pipeline
