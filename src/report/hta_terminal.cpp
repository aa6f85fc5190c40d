#include "report/hta_terminal.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "analysis/hta_compat/kernel_type.h"
#include "report/printable_text.h"
#include "report/text_table.h"

namespace stepscope::report {

namespace hta = analysis::hta;

namespace {
std::string opt_pct(const std::optional<double>& v) { return v ? fmt::format("{:.2f}%", *v) : std::string("n/a"); }
}  // namespace

std::string render_hta_terminal(const hta::HtaResult& h, size_t name_width, size_t max_rank_rows) {
  const std::string_view release = hta::to_string(h.release);
  std::string out =
      fmt::format("\nHTA {}-compatible results (--compat: µs rounding, HTA's step cut and filters)\n", release);
  // The per-rank tables list every rank when they fit; past max_rank_rows,
  // the ranks with the largest idle share (where a user looks first).
  std::vector<const hta::HtaTemporalRow*> temporal;
  for (const auto& r : h.temporal_breakdown) temporal.push_back(&r);
  std::set<int64_t> shown_ranks;
  if (temporal.size() > max_rank_rows) {
    std::stable_sort(temporal.begin(), temporal.end(), [](const auto* x, const auto* y) {
      return x->idle_time_pctg.value_or(-1.0) > y->idle_time_pctg.value_or(-1.0);
    });
    temporal.resize(max_rank_rows);
    for (const auto* r : temporal) shown_ranks.insert(r->rank);
    out += fmt::format(
        "  the {} of {} ranks with the largest idle share, here and in the per-rank tables below;\n"
        "  every rank is in the JSON report: hta.temporal_breakdown, hta.kernel_breakdown_top, hta.idle_time_breakdown\n",
        max_rank_rows, h.temporal_breakdown.size());
  }
  auto shown = [&](int64_t rank) { return shown_ranks.empty() || shown_ranks.count(rank) > 0; };
  TextTable t;
  t.add_column("rank");
  t.add_column("kernel time (µs)");
  t.add_column("idle (µs)");
  t.add_column("compute (µs)");
  t.add_column("non-compute (µs)");
  t.add_column("idle");
  t.add_column("compute");
  t.add_column("non-compute");
  t.add_column("comm overlapped");
  std::map<int64_t, std::string> overlap_of;
  for (const auto& o : h.comm_comp_overlap) overlap_of[o.rank] = opt_pct(o.comp_comm_overlap_pctg);
  for (const auto* r : temporal) {
    auto o = overlap_of.find(r->rank);
    t.add_row({std::to_string(r->rank), fmt::format("{:.0f}", r->kernel_time_us), fmt::format("{:.0f}", r->idle_time_us),
               fmt::format("{:.0f}", r->compute_time_us), fmt::format("{:.0f}", r->non_compute_time_us),
               opt_pct(r->idle_time_pctg), opt_pct(r->compute_time_pctg), opt_pct(r->non_compute_time_pctg),
               o == overlap_of.end() ? std::string("n/a") : o->second});
  }
  out += t.render();

  TextTable k;
  k.add_column("kernel type (exclusive, all ranks)", TextTable::Align::kLeft);
  k.add_column("sum (µs)");
  k.add_column("share");
  for (const auto& r : h.kernel_type_breakdown)
    k.add_row({r.kernel_type, fmt_count(r.sum_us), r.percentage ? fmt::format("{:.1f}%", *r.percentage) : "n/a"});
  if (!k.empty()) (out += '\n') += k.render();  // two appends: GCC 12 warns (-Wrestrict) on "\n" + string

  TextTable top;
  top.add_column("kernel", TextTable::Align::kLeft);
  top.add_column("type", TextTable::Align::kLeft);
  top.add_column("rank");
  top.add_column("sum (µs)");
  top.add_column("mean (µs)");
  top.add_column("max (µs)");
  for (const auto& r : h.kernel_breakdown_top)
    if (shown(r.rank))
      top.add_row({shorten(r.name, name_width), std::string(hta::to_string(r.kernel_type)), std::to_string(r.rank),
                   fmt::format("{:.0f}", r.sum_us), fmt::format("{:.1f}", r.mean_us), fmt::format("{:.0f}", r.max_us)});
  if (!top.empty()) (out += '\n') += top.render();  // two appends: GCC 12 warns (-Wrestrict) on "\n" + string

  TextTable idle;
  idle.add_column("rank");
  idle.add_column("stream");
  idle.add_column("category", TextTable::Align::kLeft);
  idle.add_column("idle (µs)");
  idle.add_column("ratio");
  for (const auto& r : h.idle_time_breakdown)
    if (shown(r.rank))
      idle.add_row({std::to_string(r.rank), std::to_string(r.stream), r.idle_category,
                    fmt::format("{:.0f}", r.idle_time),
                    r.idle_time_ratio ? fmt::format("{:.2f}", *r.idle_time_ratio) : "n/a"});
  if (!idle.empty()) (out += '\n') += idle.render();  // two appends: GCC 12 warns (-Wrestrict) on "\n" + string

  auto would_fail = [&](const char* table, const std::string& e) {
    if (!e.empty())
      out += fmt::format("  note: HTA {} fails on {} here ({}); the rows above are stepscope's answer\n", release, table,
                         printable_text(e));
  };
  would_fail("temporal_breakdown", h.hta_errors.temporal_breakdown);
  would_fail("idle_time_breakdown", h.hta_errors.idle_time_breakdown);
  would_fail("queue_length_summary", h.hta_errors.queue_length_summary);
  would_fail("memory_bw_summary", h.hta_errors.memory_bw_summary);
  for (const auto& n : h.notes) out += "  note: " + n + "\n";
  return out;
}

}  // namespace stepscope::report
