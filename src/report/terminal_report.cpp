#include "report/terminal_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analysis/kernel_class.h"
#include "report/diagnosis_terminal.h"
#include "report/hta_terminal.h"
#include "report/printable_text.h"
#include "report/rank_spread.h"
#include "report/terminal_color.h"
#include "report/terminal_summary.h"
#include "report/terminal_text.h"
#include "report/text_table.h"

namespace stepscope::report {

namespace {

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

std::string section(std::string_view title) { return fmt::format("\n{}\n", title); }

// Per-rank summary: one column per rank (or min/median/max over ranks).
std::string rank_summary(const AnalyzeReport& r, const TerminalOptions& o) {
  struct Metric {
    std::string label;
    std::function<std::string(const analysis::RankAnalysis&)> cell;
    std::function<double(const analysis::RankAnalysis&)> value;  // for summaries
    std::function<std::string(double)> format;
  };
  auto ms_metric = [](std::string label, auto get) {
    return Metric{std::move(label), [get](const auto& a) { return fmt_ms(us(get(a))); },
                  [get](const auto& a) { return us(get(a)); }, [](double v) { return fmt_ms(v); }};
  };
  auto pct_metric = [](std::string label, auto get) {
    return Metric{std::move(label), [get](const auto& a) { return fmt_pct(get(a)); },
                  [get](const auto& a) { return get(a); }, [](double v) { return fmt_pct(v); }};
  };
  std::vector<Metric> metrics = {
      ms_metric("GPU span, first to last activity (ms)", [](const auto& a) { return a.temporal.rank.kernel_time_ns; }),
      ms_metric("  idle (ms)", [](const auto& a) { return a.temporal.rank.idle_time_ns; }),
      ms_metric("  compute (ms)", [](const auto& a) { return a.temporal.rank.compute_time_ns; }),
      ms_metric("  non-compute (ms)", [](const auto& a) { return a.temporal.rank.non_compute_time_ns; }),
      pct_metric("idle share", [](const auto& a) { return a.temporal.rank.idle_pct; }),
      pct_metric("compute share", [](const auto& a) { return a.temporal.rank.compute_pct; }),
      pct_metric("non-compute share", [](const auto& a) { return a.temporal.rank.non_compute_pct; }),
      ms_metric("communication, union (ms)", [](const auto& a) { return a.temporal.rank.communication_time_ns; }),
      ms_metric("memory copies, union (ms)", [](const auto& a) { return a.temporal.rank.memory_time_ns; }),
      Metric{"comm hidden behind compute",
             [](const auto& a) { return a.overlap.overlap_pct ? fmt_pct(*a.overlap.overlap_pct) : std::string("n/a"); },
             [](const auto& a) { return a.overlap.overlap_pct.value_or(0.0); }, [](double v) { return fmt_pct(v); }},
      Metric{"GPU activities", [](const auto& a) { return fmt_count(a.gpu_activities); },
             [](const auto& a) { return static_cast<double>(a.gpu_activities); },
             [](double v) { return fmt_count(static_cast<int64_t>(v)); }},
      Metric{"profiler steps", [](const auto& a) { return fmt_count(static_cast<int64_t>(a.steps.steps.size())); },
             [](const auto& a) { return static_cast<double>(a.steps.steps.size()); },
             [](double v) { return fmt_count(static_cast<int64_t>(v)); }},
  };
  TextTable t;
  t.add_column("", TextTable::Align::kLeft);
  bool side = r.ranks.size() <= o.max_side_by_side;
  if (side) {
    for (const auto& a : r.ranks) t.add_column(fmt::format("rank {}", a.rank));
  } else {
    t.add_column("min");
    t.add_column("median");
    t.add_column("max");
    t.add_column("max rank");
  }
  for (const auto& m : metrics) {
    std::vector<std::string> row{m.label};
    if (side) {
      for (const auto& a : r.ranks) row.push_back(m.cell(a));
    } else {
      std::vector<std::pair<double, int64_t>> v;
      for (const auto& a : r.ranks) v.emplace_back(m.value(a), a.rank);
      const RankSpread spread = rank_spread(std::move(v));
      row.push_back(m.format(spread.min));
      row.push_back(m.format(spread.median));
      row.push_back(m.format(spread.max));
      row.push_back(std::to_string(spread.max_rank));
    }
    t.add_row(std::move(row));
  }
  return t.render();
}

std::string steps_table(const analysis::RankAnalysis& a) {
  TextTable t;
  t.add_column("step");
  t.add_column("CPU (ms)");
  t.add_column("GPU span (ms)");
  t.add_column("kernels");
  t.add_column("idle");
  t.add_column("compute");
  t.add_column("non-compute");
  for (size_t i = 0; i < a.steps.steps.size(); ++i) {
    const auto& s = a.steps.steps[i];
    const analysis::TemporalBreakdown* b = i < a.temporal.steps.size() ? &a.temporal.steps[i].breakdown : nullptr;
    t.add_row({std::to_string(s.step), fmt_ms(us(s.cpu_duration_ns)), fmt_ms(us(s.gpu_duration_ns)),
               fmt_count(s.gpu_activities), b ? fmt_pct(b->idle_pct) : "", b ? fmt_pct(b->compute_pct) : "",
               b ? fmt_pct(b->non_compute_pct) : ""});
  }
  return t.render();
}

std::string kernels_table(const analysis::RankAnalysis& a, const TerminalOptions& o) {
  TextTable types;
  types.add_column("type", TextTable::Align::kLeft);
  types.add_column("kernels");
  types.add_column("total (ms)");
  types.add_column("share of GPU time");
  std::vector<const analysis::KernelStat*> all;
  for (const auto& c : a.kernels.classes) {
    if (c.duration.count == 0) continue;
    types.add_row({std::string(analysis::to_string(c.cls)), fmt_count(c.duration.count),
                   fmt_ms(us(c.duration.total_ns)), fmt_pct(c.pct_of_all)});
    for (const auto& k : c.top) all.push_back(&k);
  }
  std::sort(all.begin(), all.end(), [](const auto* x, const auto* y) {
    return x->duration.total_ns != y->duration.total_ns ? x->duration.total_ns > y->duration.total_ns : x->name < y->name;
  });
  if (all.size() > o.top_kernels) all.resize(o.top_kernels);
  TextTable top;
  top.add_column("kernel", TextTable::Align::kLeft);
  top.add_column("type", TextTable::Align::kLeft);
  top.add_column("count");
  top.add_column("total (ms)");
  top.add_column("mean (µs)");
  top.add_column("min (µs)");
  top.add_column("max (µs)");
  top.add_column("std (µs)");
  for (const auto* k : all) {
    top.add_row({shorten(k->name, o.name_width), std::string(analysis::to_string(k->cls)),
                 fmt_count(k->duration.count), fmt_ms(us(k->duration.total_ns)), fmt_us(k->duration.mean_us),
                 fmt_us(us(k->duration.min_ns)), fmt_us(us(k->duration.max_ns)), fmt_us(k->duration.stddev_us)});
  }
  std::string out = types.render();
  if (!a.kernels.families.empty()) {
    TextTable fam;
    fam.add_column("compute family", TextTable::Align::kLeft);
    fam.add_column("kernels");
    fam.add_column("total (ms)");
    fam.add_column("share of compute");
    for (const auto& f : a.kernels.families)
      fam.add_row({std::string(analysis::to_string(f.family)), fmt_count(f.duration.count),
                   fmt_ms(us(f.duration.total_ns)), fmt_pct(f.pct_of_compute)});
    (out += '\n') += fam.render();  // two appends: GCC 12 warns (-Wrestrict) on "\n" + string
  }
  (out += '\n') += top.render();  // two appends: GCC 12 warns (-Wrestrict) on "\n" + string
  return out;
}

std::string idle_table(const analysis::RankAnalysis& a) {
  TextTable t;
  t.add_column("device");
  t.add_column("stream");
  t.add_column("idle (ms)");
  t.add_column("host wait (ms)");
  t.add_column("kernel wait (ms)");
  t.add_column("other (ms)");
  t.add_column("host wait share");
  for (const auto& s : a.idle.streams) {
    t.add_row({std::to_string(s.device), std::to_string(s.stream), fmt_ms(us(s.idle_ns)), fmt_ms(us(s.host_wait_ns)),
               fmt_ms(us(s.kernel_wait_ns)), fmt_ms(us(s.other_ns)), fmt_pct(100.0 * s.host_wait_ratio)});
  }
  return t.render();
}

std::string launch_table(const analysis::RankAnalysis& a) {
  const auto& l = a.launches;
  TextTable t;
  t.add_column("per launch", TextTable::Align::kLeft);
  t.add_column("mean (µs)");
  t.add_column("p50 (µs)");
  t.add_column("p90 (µs)");
  t.add_column("p99 (µs)");
  t.add_column("max (µs)");
  auto row = [&](std::string label, const analysis::Distribution& d) {
    t.add_row({std::move(label), fmt_us(d.mean), fmt_us(d.p50), fmt_us(d.p90), fmt_us(d.p99), fmt_us(d.max)});
  };
  row("CPU runtime call", l.cpu_duration_us);
  row("GPU kernel", l.gpu_duration_us);
  row("launch delay (GPU start - call end)", l.launch_delay_us);
  row("start latency (GPU start - call start)", l.start_latency_us);
  return fmt::format("  {} launches matched, {} GPU activities without a launch; {} launch delays > {} µs, {} calls > {} µs\n",
                     fmt_count(l.launches), fmt_count(l.unmatched_kernels), fmt_count(l.launch_delay_outliers),
                     fmt_us(us(l.launch_delay_threshold_ns)), fmt_count(l.cpu_duration_outliers),
                     fmt_us(us(l.cpu_duration_threshold_ns))) +
         t.render();
}

std::string queue_table(const analysis::RankAnalysis& a) {
  TextTable t;
  t.add_column("device");
  t.add_column("stream");
  t.add_column("launches");
  t.add_column("mean length (time-weighted)");
  t.add_column("max length");
  t.add_column(fmt::format("time at >= {} (ms)", a.queues.queue_limit));
  for (const auto& q : a.queues.streams)
    t.add_row({std::to_string(q.device), std::to_string(q.stream), fmt_count(q.activities),
               fmt::format("{:.2f}", q.mean_length), fmt_count(q.max_length), fmt_ms(us(q.time_at_limit_ns))});
  return t.render();
}

std::string copies_table(const analysis::RankAnalysis& a) {
  TextTable t;
  t.add_column("copy", TextTable::Align::kLeft);
  t.add_column("count");
  t.add_column("bytes");
  t.add_column("time (ms)");
  t.add_column("GB/s");
  for (const auto& c : a.copies.kinds)
    t.add_row({c.name, fmt_count(c.count), fmt_bytes(static_cast<double>(c.bytes)), fmt_ms(us(c.time_ns)),
               fmt::format("{:.1f}", c.achieved_gbps)});
  return t.render();
}

std::string allocator_table(const analysis::RankAnalysis& a) {
  TextTable t;
  t.add_column("device", TextTable::Align::kLeft);
  t.add_column("samples");
  t.add_column("peak allocated");
  t.add_column("peak reserved");
  t.add_column("max reserved - allocated");
  for (const auto& d : a.memory.devices) {
    std::string dev = d.device_type == 0 ? "cpu" : fmt::format("gpu {}", d.device_id);
    t.add_row({dev, fmt_count(d.samples), fmt_bytes(static_cast<double>(d.peak_allocated_bytes)),
               fmt_bytes(static_cast<double>(d.peak_reserved_bytes)),
               fmt_bytes(static_cast<double>(d.max_reserved_minus_allocated_bytes))});
  }
  return t.render();
}

// "1.23 G" style for counts that run to 1e12 (FLOPs, instructions); "-" when not recorded.
std::string fmt_large(const std::optional<double>& v) {
  if (!v) return "-";
  const double x = *v;
  if (x >= 1e12) return fmt::format("{:.2f} T", x / 1e12);
  if (x >= 1e9) return fmt::format("{:.2f} G", x / 1e9);
  if (x >= 1e6) return fmt::format("{:.2f} M", x / 1e6);
  if (x >= 1e3) return fmt::format("{:.2f} k", x / 1e3);
  return fmt::format("{:.0f}", x);
}

std::string counter_groups_table(const std::vector<analysis::CounterGroup>& groups, std::string_view first,
                                 const TerminalOptions& o) {
  constexpr size_t kRows = 10;
  TextTable t;
  t.add_column(std::string(first), TextTable::Align::kLeft);
  t.add_column("ranges");
  t.add_column("CUDA-core FLOP");
  t.add_column("fp32 share");
  t.add_column("tensor-core inst");
  t.add_column("DRAM bytes");
  for (size_t i = 0; i < groups.size() && i < kRows; ++i) {
    const auto& d = groups[i].derived;
    const bool share = d.cuda_core_flops && d.fp32_flops && *d.cuda_core_flops > 0;
    t.add_row({shorten(groups[i].name, o.name_width), fmt_count(groups[i].ranges), fmt_large(d.cuda_core_flops),
               share ? fmt_pct(100.0 * *d.fp32_flops / *d.cuda_core_flops) : "-", fmt_large(d.tensor_core_insts),
               d.dram_bytes ? fmt_bytes(*d.dram_bytes) : "-"});
  }
  std::string out = t.render();
  if (groups.size() > kRows) out += fmt::format("  ... {} more in the JSON report\n", groups.size() - kRows);
  return out;
}

std::string counters_section(const analysis::RankAnalysis& a, const TerminalOptions& o) {
  const auto& c = a.counters;
  std::string out = fmt::format(
      "  {} range{} on {} device{}. Kineto spreads them evenly over the session: their times are not measured, "
      "and the trace holds no kernel times.\n",
      fmt_count(c.ranges), c.ranges == 1 ? "" : "s", c.devices, c.devices == 1 ? "" : "s");
  out += counter_groups_table(c.kernels, "kernel (range)", o);
  if (c.matched_to_launches) {
    out += "\n  By top-level operator (each range tied to its kernel launch by order):\n";
    out += counter_groups_table(c.ops, "operator", o);
  } else {
    out += "  Not tied to operators: " + printable_text(c.match_note) + "\n";
  }
  return out;
}

std::string multi_rank_section(const AnalyzeReport& r, const TerminalOptions& o) {
  const auto& m = r.multi;
  std::string out;
  if (!m.steps.empty()) {
    TextTable t;
    t.add_column("step");
    t.add_column("CPU min (ms)");
    t.add_column("CPU max (ms)");
    t.add_column("slowest rank");
    t.add_column("GPU min (ms)");
    t.add_column("GPU max (ms)");
    t.add_column("spread (ms)");
    for (const auto& s : m.steps)
      t.add_row({std::to_string(s.step), fmt_ms(us(s.cpu.min_ns)), fmt_ms(us(s.cpu.max_ns)),
                 std::to_string(s.cpu.slowest_rank), fmt_ms(us(s.gpu.min_ns)), fmt_ms(us(s.gpu.max_ns)),
                 fmt_ms(us(s.gpu.spread_ns))});
    out += t.render();
  }
  const auto& c = m.collectives;
  if (c.withheld) {
    out += "  collective skew and stragglers withheld: the ranks' clocks cannot be compared (see the warning)\n";
    return out;
  }
  if (m.clocks.status == "corrected")
    out += fmt::format("  clocks aligned to rank {} from matched collective end times before the figures below "
                       "(offsets in the JSON report)\n",
                       m.clocks.reference_rank);
  out += fmt::format("  collectives matched across ranks: {} (unmatched {}); start skew mean {} µs, max {} µs\n",
                     fmt_count(c.matched_calls), fmt_count(c.unmatched_calls), fmt_us(c.mean_skew_us),
                     fmt_us(us(c.max_skew_ns)));
  if (c.source == "host_ops")
    out += "  (no communication kernels in the traces: calls are the host-side c10d ranges, e.g. gloo:all_reduce)\n";
  else if (c.source == "mixed")
    out += "  (some ranks have no communication kernels: their calls are host-side c10d ranges, not comparable)\n";
  if (!c.ranks.empty()) {
    // Every rank when they fit; past max_rank_rows, the stragglers and then
    // the latest other ranks, latest first (the JSON report has them all).
    std::vector<const analysis::RankLateness*> shown;
    for (const auto& x : c.ranks) shown.push_back(&x);
    if (shown.size() > o.max_rank_rows) {
      std::stable_sort(shown.begin(), shown.end(), [](const auto* x, const auto* y) {
        if (x->straggler != y->straggler) return x->straggler;
        return x->mean_lateness_us > y->mean_lateness_us;
      });
      shown.resize(o.max_rank_rows);
      std::stable_sort(shown.begin(), shown.end(), [](const auto* x, const auto* y) {
        return x->mean_lateness_us > y->mean_lateness_us;
      });
      out += fmt::format(
          "  the {} latest of {} ranks, stragglers first ({} flagged);\n"
          "  every rank is in the JSON report: multi_rank.collective_skew.ranks\n",
          o.max_rank_rows, c.ranks.size(), c.stragglers.size());
    }
    TextTable t;
    t.add_column("rank");
    t.add_column("collectives");
    t.add_column("mean lateness (µs)");
    t.add_column("max lateness (µs)");
    t.add_column("times last");
    t.add_column("straggler", TextTable::Align::kLeft);
    for (const auto* x : shown)
      t.add_row({std::to_string(x->rank), fmt_count(x->collectives), fmt_us(x->mean_lateness_us),
                 fmt_us(us(x->max_lateness_ns)), fmt_count(x->times_last), x->straggler ? "yes" : ""});
    out += t.render();
  }
  out += fmt::format("  compute time across ranks: mean {} ms, stddev {} ms (cv {:.3f})\n",
                     fmt_ms(m.gpu_time.mean_compute_us), fmt_ms(m.gpu_time.stddev_compute_us), m.gpu_time.cv_compute);
  if (!m.kernels.top.empty()) {
    out += fmt::format("  kernels over all ranks (percentiles within {:.0f}%):\n", 100 * m.kernels.relative_error);
    TextTable t;
    // Narrower names than the per-rank table: the row must fit the terminal width.
    t.add_column("kernel (by type)", TextTable::Align::kLeft);
    t.add_column("launches");
    t.add_column("total (ms)");
    t.add_column("p50 (µs)");
    t.add_column("p99 (µs)");
    t.add_column("max (µs)");
    t.add_column("max rank");
    for (const auto& k : m.kernels.top)
      t.add_row({shorten(k.name, std::min<size_t>(o.name_width, 48)), fmt_count(k.count), fmt_ms(us(k.total_ns)),
                 fmt_us(k.p50_ns / 1000.0), fmt_us(k.p99_ns / 1000.0), fmt_us(us(k.max_ns)),
                 std::to_string(k.max_rank)});
    out += t.render();
  }
  return out;
}

// Notes and warnings, each wrapped; by default only the first few of each
// (a folder of many files can add one note per skipped file).
std::string messages(const std::vector<std::string>& lines, std::string_view label, const TerminalOptions& o) {
  constexpr size_t kShown = 5;
  std::string out;
  const size_t shown = o.details ? lines.size() : std::min(lines.size(), kShown);
  for (size_t i = 0; i < shown; ++i)
    out += wrap(printable_text(lines[i]), kTerminalWidth, fmt::format("  {}: ", label), "    ");
  if (shown < lines.size()) out += fmt::format("  ... {} more {}s (--details)\n", lines.size() - shown, label);
  return out;
}

// Per rank, one line: how many records were skipped or repaired; the
// records themselves with --details.
std::string import_lines(const AnalyzeReport& r, bool details) {
  std::string out;
  for (const analysis::RankAnalysis& rank : r.ranks) {
    const trace::ImportStats& stats = rank.origin.import;
    const uint64_t skipped = stats.skipped_records();
    const uint64_t repaired = stats.repaired_records();
    const bool truncated = stats.count(trace::ImportCounter::kTruncatedInput) > 0;
    if (skipped == 0 && repaired == 0 && !truncated) continue;
    out += wrap(fmt::format("rank {} ({}): {} records skipped{}{}", rank.rank, printable_text(rank.source_path),
                            fmt_count(static_cast<int64_t>(skipped)),
                            repaired ? fmt::format(", {} repaired (invalid UTF-8 replaced by U+FFFD, event kept)", repaired)
                                     : "",
                            truncated ? ", input truncated (salvaged)" : ""),
                kTerminalWidth, "  ", "    ");
    if (!details) continue;
    for (const auto& e : stats.log())
      out += fmt::format("    {} at byte {}: {}\n", trace::counter_info(e.counter).name, e.byte_offset,
                         printable_text(e.message));
  }
  return out;
}

// The statistics behind the findings, for one rank (the only one, or the
// slowest by GPU span) and across ranks.
std::string detail_tables(const AnalyzeReport& r, const TerminalOptions& o) {
  std::string out = section("GPU time breakdown (idle / compute / non-compute over the GPU span)");
  out += rank_summary(r, o);
  const analysis::RankAnalysis* focus = &focus_rank(r);
  std::string who = r.ranks.size() == 1 ? "" : fmt::format(" (rank {}, the longest GPU span)", focus->rank);
  if (focus->gpu_activities == 0) {
    out += focus->counters.ranges > 0
               ? "\n  The trace has no GPU events: it holds CUPTI range-profiler counters instead (below).\n"
               : "\n  The trace has no GPU events: only CPU-side results are available.\n";
  }
  if (!focus->steps.steps.empty()) out += section("Steps" + who) + steps_table(*focus);
  if (focus->gpu_activities > 0) {
    out += section("Kernels by type and top kernels by total time" + who) + kernels_table(*focus, o);
    out += section("Idle time per stream: host wait / kernel wait / other" + who) + idle_table(*focus);
    if (focus->launches.launches > 0) out += section("Kernel launches" + who) + launch_table(*focus);
    if (!focus->queues.streams.empty()) out += section("Launch queue length per stream" + who) + queue_table(*focus);
    if (!focus->copies.kinds.empty()) out += section("Memory copies and sets" + who) + copies_table(*focus);
  }
  if (!focus->memory.devices.empty()) out += section("Caching allocator" + who) + allocator_table(*focus);
  for (const auto& a : r.ranks)
    if (a.counters.ranges > 0) {
      // A range-profiler trace has no GPU span to pick a rank by: the first with counters.
      const std::string rank = r.ranks.size() == 1 ? "" : fmt::format(" (rank {})", a.rank);
      out += section("Hardware counters per kernel, CUPTI range profiler" + rank) + counters_section(a, o);
      break;
    }
  if (r.ranks.size() >= 2) out += section("Across ranks") + multi_rank_section(r, o);
  return out;
}

}  // namespace

std::string render_terminal(const AnalyzeReport& r, const TerminalOptions& o) {
  const std::string head =
      r.summaries == 0
          ? fmt::format("stepscope analyze: {} rank{}, {:.1f} MB of trace JSON read in {:.2f} s, analysed in {:.2f} s "
                        "(mode: {})",
                        r.ranks.size(), r.ranks.size() == 1 ? "" : "s", r.uncompressed_bytes / 1e6, r.read_seconds,
                        r.analysis_seconds, r.mode)
          : fmt::format("stepscope merge: {} rank{} ({:.1f} MB of trace JSON) from {} summaries read in {:.2f} s, "
                        "merged in {:.2f} s (mode: {}; what needs every rank's step graph is not merged: see Not assessed)",
                        r.ranks.size(), r.ranks.size() == 1 ? "" : "s", r.uncompressed_bytes / 1e6, r.summaries,
                        r.read_seconds, r.analysis_seconds, r.mode);
  std::string out = wrap(head, kTerminalWidth, "", "  ");
  out += messages(r.warnings, "warning", o);
  out += messages(r.notes, "note", o);
  std::string imports = import_lines(r, o.details);
  if (!imports.empty()) out += section("Input problems (skipped records are not analysed; repaired ones are)") + imports;

  if (r.diagnosis) {
    DiagnosisTerminalOptions d;
    d.max_findings = o.max_findings;
    d.max_side_by_side = o.max_side_by_side;
    d.ranks = r.ranks.size();
    d.details = o.details;
    out += render_diagnosis_terminal(*r.diagnosis, d);
  }
  out += render_terminal_summary(r);
  if (o.details) {
    out += detail_tables(r, o);
  } else {
    out += "\n  Statistics tables (GPU time, steps, kernels, idle per stream, launches, copies, allocator,\n"
           "  ranks): --details. Everything, full names included: --json or --html.\n";
  }
  if (r.hta) out += render_hta_terminal(*r.hta, o.name_width, o.max_rank_rows);
  // Names went through printable_text; this pass keeps any missed one from
  // driving the terminal. Colours come after it: they are the report's own.
  out = printable_lines(out);
  return o.color ? colorize_report(out) : out;
}

}  // namespace stepscope::report
