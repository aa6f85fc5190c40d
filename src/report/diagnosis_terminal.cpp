#include "report/diagnosis_terminal.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "report/printable_text.h"
#include "report/rank_spread.h"
#include "report/terminal_text.h"
#include "report/text_table.h"
#include "analysis/saturating.h"

namespace stepscope::report {

using analysis::add_into;

namespace dg = diagnose;

namespace {

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

// Buckets grouped the way a team reports upward.
struct Group {
  const char* label;
  std::vector<dg::Bucket> buckets;
};
const std::vector<Group>& groups() {
  static const std::vector<Group> g = {
      {"effective compute: tensor-core matmul", {dg::Bucket::kComputeTensorCore}},
      {"effective compute: other kernels", {dg::Bucket::kComputeOther}},
      {"matmul off the tensor cores (SIMT)", {dg::Bucket::kComputeSimtMatmul}},
      {"exposed communication", {dg::Bucket::kCommunication}},
      {"exposed memory copies", {dg::Bucket::kMemoryCopy}},
      {"data pipeline wait", {dg::Bucket::kDataPipeline}},
      {"host overhead (launch / framework)", {dg::Bucket::kHostOverhead}},
      {"host sync stalls", {dg::Bucket::kHostSync}},
      {"allocator", {dg::Bucket::kAllocator}},
      {"other idle", {dg::Bucket::kOtherIdle}},
  };
  return g;
}

// A paragraph of the report: wrapped to the terminal, continued under its text.
std::string para(const std::string& text, std::string_view indent, std::string_view hanging) {
  return wrap(text, kTerminalWidth, indent, hanging);
}

std::string no_steps_note(const dg::Diagnosis& d) {
  for (const auto& a : d.attribution)
    if (a.from_profiler_steps) return "";
  return "  (no ProfilerStep markers: one window over the whole GPU span)\n";
}

double mean_per_step_us(const dg::RankAttribution& a, int64_t ns) {
  return us(ns) / (a.steps.empty() ? 1.0 : static_cast<double>(a.steps.size()));
}

// Past max_side_by_side ranks, one column per rank would make lines
// thousands of characters wide: each bucket's mean per step is summarised
// over the ranks (min, lower median, max and the rank with the max), and its
// share is of all ranks' time together, so the shares still sum to 100%.
std::string attribution_summary(const dg::Diagnosis& d) {
  std::string out = "\n" + para(fmt::format("Where step time went (mean per step over {} ranks; shares of all ranks' "
                                             "time, summing to 100%)",
                                             d.attribution.size()),
                                 "", "  ");
  TextTable t;
  t.add_column("", TextTable::Align::kLeft);
  t.add_column("min (ms)");
  t.add_column("median (ms)");
  t.add_column("max (ms)");
  t.add_column("max rank");
  t.add_column("share");
  int64_t all_wall_ns = 0;
  for (const auto& a : d.attribution) add_into(all_wall_ns, a.total.wall_ns());
  auto summary_row = [&](const std::string& label, auto us_of_rank, int64_t ns_all_ranks) {
    std::vector<std::pair<double, int64_t>> v;  // (µs per step, rank)
    for (const auto& a : d.attribution) v.emplace_back(us_of_rank(a), a.rank);
    const RankSpread r = rank_spread(std::move(v));
    t.add_row({label, fmt_ms(r.min), fmt_ms(r.median), fmt_ms(r.max), std::to_string(r.max_rank),
               fmt_pct(all_wall_ns > 0 ? 100.0 * static_cast<double>(ns_all_ranks) / static_cast<double>(all_wall_ns)
                                       : 0.0)});
  };
  for (const auto& g : groups()) {
    auto ns_of = [&](const dg::RankAttribution& a) {
      int64_t ns = 0;
      for (auto b : g.buckets) add_into(ns, a.total.of(b));
      return ns;
    };
    int64_t all = 0;
    for (const auto& a : d.attribution) add_into(all, ns_of(a));
    if (all <= 0) continue;
    summary_row(g.label, [&](const dg::RankAttribution& a) { return mean_per_step_us(a, ns_of(a)); }, all);
  }
  t.add_separator();
  summary_row("step time", [](const dg::RankAttribution& a) {
    return us(a.mean_step_ns() > 0 ? a.mean_step_ns() : a.total.wall_ns());
  }, all_wall_ns);
  out += t.render();
  return out;
}

// One line per rank: the largest shares of the steps' critical path
// (docs/whatif.md), host CPU time as one share.
// The fixes asked for with --what-if, replayed together.
std::string what_if_line(const dg::Diagnosis& d) {
  if (!d.what_if) return "";
  const dg::WhatIf& w = *d.what_if;
  std::string names;
  for (const std::string& c : w.categories) names += (names.empty() ? "" : " + ") + c;
  std::string out = para(
      w.rank >= 0 ? fmt::format("What if you fixed {}: {} ms/step ({:.1f}% of rank {}'s unprofiled step), replayed",
                                names, fmt_ms(w.saving_us), w.saving_pct, w.rank)
                  : fmt::format("What if you fixed {}: not replayed (no finding of these, or no faithful replay)", names),
      "  ", "    ");
  for (const std::string& c : w.not_found) out += para(fmt::format("({}: no finding of this category)", c), "    ", "     ");
  return out;
}

std::string critical_path_lines(const dg::Diagnosis& d) {
  using whatif::PathCategory;
  std::string out;
  for (const auto& r : d.critical_path) {
    if (r.wall_ns <= 0) continue;
    auto of = [&](PathCategory c) { return r.total_ns[static_cast<size_t>(c)]; };
    std::vector<std::pair<int64_t, std::string_view>> parts = {
        {of(PathCategory::kHostRuntime) + of(PathCategory::kHostOther), "host CPU"},
        {of(PathCategory::kDataLoader), "DataLoader"},
        {of(PathCategory::kLaunch), "launch latency"},
        {of(PathCategory::kGpuCompute), "GPU compute"},
        {of(PathCategory::kGpuMemory), "GPU copies"},
        {of(PathCategory::kGpuCommunication), "GPU communication"},
        {of(PathCategory::kStreamWait), "stream waits"},
        {of(PathCategory::kSync), "sync waits"},
        {of(PathCategory::kResidual), "unexplained"}};
    std::stable_sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string line;
    for (size_t i = 0; i < parts.size() && i < 4; ++i) {
      const double pct = 100.0 * static_cast<double>(parts[i].first) / static_cast<double>(r.wall_ns);
      if (pct < 1.0) break;
      line += fmt::format("{}{:.0f}% {}", line.empty() ? "" : ", ", pct, parts[i].second);
    }
    if (!line.empty()) out += para(fmt::format("critical path, rank {}: {}", r.rank, line), "  ", "    ");
  }
  return out;
}

// One line for the job's critical path across ranks (docs/metrics.md): the
// ranks it spends most time on and where it crosses to the rank that
// arrived last at a collective.
std::string job_critical_path_line(const dg::Diagnosis& d) {
  const whatif::JobCriticalPath& p = d.job_critical_path;
  if (p.wall_ns <= 0) return "";
  std::vector<size_t> order(p.ranks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return p.total_by_rank_ns[a] > p.total_by_rank_ns[b]; });
  std::string line;
  for (size_t k = 0; k < order.size() && k < 2; ++k) {
    const double pct = 100.0 * static_cast<double>(p.total_by_rank_ns[order[k]]) / static_cast<double>(p.wall_ns);
    if (pct < 1.0) break;
    line += fmt::format("{}{:.0f}% on rank {}", line.empty() ? "" : ", ", pct, p.ranks[order[k]]);
  }
  if (p.crossings > 0) {
    // The rank crossed to most, ties to the one with more time on the path.
    size_t to = order.front();
    for (size_t i : order)
      if (p.crossed_to[i] > p.crossed_to[to]) to = i;
    line += fmt::format("; it crosses to the rank that arrived last at {} collectives ({} to rank {})", p.crossings,
                        p.crossed_to[to], p.ranks[to]);
  } else {
    line += "; it crosses to no other rank";
  }
  return para(fmt::format("Job critical path ({} step{}): {}", p.steps.size(), p.steps.size() == 1 ? "" : "s", line),
              "  ", "    ");
}

// The buckets table: one column pair per rank, rows for the groups with time.
std::string attribution_table(const dg::Diagnosis& d, size_t max_side_by_side) {
  if (d.attribution.size() > max_side_by_side) return attribution_summary(d) + no_steps_note(d);
  std::string out = "\nWhere step time went (exclusive buckets, mean per step; they sum to 100%)\n";
  TextTable t;
  t.add_column("", TextTable::Align::kLeft);
  for (const auto& a : d.attribution) t.add_column(fmt::format("rank {} (ms)", a.rank));
  for (const auto& a : d.attribution) t.add_column(fmt::format("rank {}", a.rank));
  for (const auto& g : groups()) {
    std::vector<std::string> row{g.label};
    bool any = false;
    std::vector<std::string> pcts;
    for (const auto& a : d.attribution) {
      int64_t ns = 0;
      for (auto b : g.buckets) add_into(ns, a.total.of(b));
      any = any || ns > 0;
      row.push_back(fmt_ms(mean_per_step_us(a, ns)));
      pcts.push_back(fmt_pct(a.total.wall_ns() > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(a.total.wall_ns()) : 0.0));
    }
    if (!any) continue;
    row.insert(row.end(), pcts.begin(), pcts.end());
    t.add_row(std::move(row));
  }
  std::vector<std::string> total{"step time"};
  std::vector<std::string> hundred;
  for (const auto& a : d.attribution) {
    total.push_back(fmt_ms(us(a.mean_step_ns() > 0 ? a.mean_step_ns() : a.total.wall_ns())));
    hundred.push_back("100.0%");
  }
  total.insert(total.end(), hundred.begin(), hundred.end());
  t.add_separator();
  t.add_row(std::move(total));
  const std::string table = t.render();
  // One column pair per rank must fit the terminal; else the summary form.
  if (widest_line(table) > kTerminalWidth) return attribution_summary(d) + no_steps_note(d);
  out += table;
  return out + critical_path_lines(d) + no_steps_note(d);
}

// "rank 1, step 3, +12.40 ms" (the rank only when there are several), or
// "outside steps".
std::string example_place(const dg::Example& ex, size_t ranks) {
  std::string where = ranks > 1 ? fmt::format("rank {}, ", ex.rank) : "";
  if (!ex.timed) return where + "in the memory snapshot";
  if (ex.step >= 0 && ex.step_offset_ns >= 0)
    return where + fmt::format("step {}, +{} ms", ex.step, fmt_ms(us(ex.step_offset_ns)));
  if (ex.step >= 0) return where + fmt::format("step {}", ex.step);
  return where + "outside steps";
}

}  // namespace

std::string finding_text(const dg::Finding& f, size_t n, size_t ranks) {
  // A replayed saving is for the run without the profiler; a bound is the
  // detector's ceiling on the profiled trace.
  std::string saving =
      !f.saves_time ? std::string("risk, no time saving")
      : f.saving_basis == dg::SavingBasis::kReplay
          ? fmt::format("saves {} ms/step ({:.1f}%) without the profiler (replay; bound {} ms)",
                        fmt_ms(f.estimated_saving_us), f.estimated_saving_pct, fmt_ms(f.bound_saving_us))
          : fmt::format("saves up to {} ms/step ({:.1f}%) (bound, not replayed)", fmt_ms(f.estimated_saving_us),
                        f.estimated_saving_pct);
  std::string out = "\n" + para(fmt::format("{}. [{}] {}", n, dg::to_string(f.category), printable_text(f.title)),
                                 "  ", "     ");
  out += para(fmt::format("{}; severity {}, confidence {}", saving, dg::to_string(f.severity),
                          dg::to_string(f.confidence)),
              "     ", "     ");
  for (size_t e = 0; e < f.evidence.examples.size() && e < 2; ++e) {
    const auto& ex = f.evidence.examples[e];
    const std::string at = ex.source.empty() ? "" : " at " + printable_text(ex.source);
    out += para(fmt::format("e.g. {}: {}{} — {}", example_place(ex, ranks), printable_text(shorten(ex.name, 50)), at,
                            printable_text(ex.detail)),
                "     ", "          ");
  }
  out += para("fix: " + printable_text(f.remedy), "     ", "     ");
  return out;
}

std::string render_diagnosis_terminal(const dg::Diagnosis& d, const DiagnosisTerminalOptions& o) {
  bool any_gpu = false;
  for (const auto& a : d.attribution) any_gpu = any_gpu || a.gpu_activity;
  std::string out;
  if (d.attribution.empty() || any_gpu) {
    out += attribution_table(d, o.max_side_by_side);
    out += fmt::format("\nPrimary bottleneck: {}   (effective compute {:.1f}% of step time)\n",
                       printable_text(d.primary_bottleneck), d.effective_compute_pct);
  } else {
    // A CPU-only profile: the table would show 100% "other idle" of a GPU
    // that was never traced.
    out += "\n" + para("Where step time went: not assessed: " +
                           (d.no_gpu_activity_reason.empty()
                                ? std::string("the traces have no GPU activity (kernels, copies) to attribute; profile "
                                              "with ProfilerActivity.CUDA")
                                : printable_text(d.no_gpu_activity_reason)),
                       "", "  ");
    out += fmt::format("\nPrimary bottleneck: {}   (no GPU activity in the traces)\n", d.primary_bottleneck);
  }
  out += job_critical_path_line(d);
  if (d.findings.empty()) out += "  No finding explains a significant share of step time.\n";
  // What the fixes save together in the run without the profiler (a
  // replay, not the findings' sum: docs/whatif.md, "Savings").
  if (!d.findings.empty() && d.combined_saving_rank >= 0)
    out += para(fmt::format("All reported fixes together, replayed without the profiler: {} ms/step ({:.1f}% of rank "
                            "{}'s unprofiled step)",
                            fmt_ms(d.combined_saving_us), d.combined_saving_pct, d.combined_saving_rank),
                "  ", "    ");
  out += what_if_line(d);
  size_t n = 0;
  for (const auto& f : d.findings) {
    if (n++ == o.max_findings) {
      out += fmt::format("  ... {} more findings in the JSON/HTML report\n", d.findings.size() - o.max_findings);
      break;
    }
    out += finding_text(f, n, o.ranks);
  }
  if (!d.not_assessed.empty() && o.details) {
    out += "\n  Not assessed (the trace lacks what the check needs):\n";
    for (const auto& na : d.not_assessed)
      out += para(fmt::format("{}: {} — {}", na.detector, printable_text(na.what), printable_text(na.reason)), "    ",
                  "      ");
  } else if (!d.not_assessed.empty()) {
    std::vector<std::string> names;
    for (const auto& na : d.not_assessed)
      if (std::find(names.begin(), names.end(), na.detector) == names.end()) names.push_back(na.detector);
    out += "\n" + para(fmt::format("Not assessed (the trace lacks what they need; why: --details): {}",
                                    fmt::join(names, ", ")),
                        "  ", "    ");
  }
  return out;
}

}  // namespace stepscope::report
