#include "report/printable_text.h"
#include "report/diff_report.h"

#include <fmt/format.h>

#include "report/kernel_label.h"
#include "report/text_table.h"

namespace stepscope::report {
namespace {

using diff::Change;

std::string section(std::string_view title) { return fmt::format("\n{}\n", title); }

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

std::string run_line(const char* side, const std::vector<std::string>& inputs, const diff::RunInfo& r) {
  return fmt::format("  {}: {} ({} rank{}, {} step{}{}{})\n", side, printable_text(join(inputs)), r.ranks, r.ranks == 1 ? "" : "s",
                     r.windows, r.windows == 1 ? "" : "s", r.from_profiler_steps ? "" : " (no step markers)",
                     r.device.empty() ? "" : ", " + r.device);
}

// Signed changes: "+1.234", "-80.2%", "+3.1 pt".
std::string signed_ms(double us) { return fmt::format("{:+.3f}", us / 1000.0); }
std::string signed_pct(double pct) { return fmt::format("{:+.1f}%", pct); }
std::string signed_pt(double pt) { return fmt::format("{:+.1f} pt", pt); }
std::string count_per_step(double n) { return fmt::format("{:.1f}", n); }

std::string summary_table(const diff::DiffResult& d) {
  TextTable t;
  t.add_column("per step", TextTable::Align::kLeft);
  t.add_column("before");
  t.add_column("after");
  t.add_column("change");
  t.add_column("change (%)");
  auto ms_row = [&](std::string label, const Change& c) {
    t.add_row({std::move(label), fmt_ms(c.before), fmt_ms(c.after), signed_ms(c.change),
               c.before != 0 ? signed_pct(c.change_pct) : "n/a"});
  };
  auto share_row = [&](std::string label, const Change& c) {
    t.add_row({std::move(label), fmt_pct(c.before), fmt_pct(c.after), signed_pt(c.change), ""});
  };
  ms_row("step time (ms)", d.step_us);
  share_row("GPU busy share of the step", d.busy_pct);
  share_row("compute share of the step", d.compute_pct);
  share_row("effective compute share of the step", d.effective_compute_pct);
  const Change& n = d.kernels.count_per_step;
  t.add_row({"GPU activities (count)", count_per_step(n.before), count_per_step(n.after),
             fmt::format("{:+.1f}", n.change), n.before != 0 ? signed_pct(n.change_pct) : "n/a"});
  ms_row("GPU activity time, sum (ms)", d.kernels.us_per_step);
  t.add_row({"primary bottleneck", d.primary_before, d.primary_after,
             d.primary_before == d.primary_after ? "same" : "changed", ""});
  return t.render();
}

std::string buckets_table(const diff::DiffResult& d) {
  TextTable t;
  t.add_column("bucket", TextTable::Align::kLeft);
  t.add_column("before (ms)");
  t.add_column("before share");
  t.add_column("after (ms)");
  t.add_column("after share");
  t.add_column("change (ms)");
  t.add_column("change (share)");
  for (const auto& b : d.buckets) {
    if (b.us_per_step.before == 0 && b.us_per_step.after == 0) continue;
    t.add_row({std::string(diagnose::to_string(b.bucket)), fmt_ms(b.us_per_step.before), fmt_pct(b.share_pct.before),
               fmt_ms(b.us_per_step.after), fmt_pct(b.share_pct.after), signed_ms(b.us_per_step.change),
               signed_pt(b.share_pct.change)});
  }
  t.add_separator();
  t.add_row({"step time", fmt_ms(d.step_us.before), fmt_pct(d.step_us.before > 0 ? 100.0 : 0.0), fmt_ms(d.step_us.after),
             fmt_pct(d.step_us.after > 0 ? 100.0 : 0.0), signed_ms(d.step_us.change), ""});
  return t.render();
}

std::string saving_cell(const diff::FindingSide& s) {
  if (!s.present) return "-";
  if (!s.saves_time) return fmt::format("risk ({})", diagnose::to_string(s.severity));
  return fmt::format("{} ({}){}", fmt_ms(s.saving_us), fmt_pct(s.saving_pct), s.reported ? "" : " minor");
}

std::string findings_table(const diff::DiffResult& d, const DiffTerminalOptions& o) {
  TextTable t;
  t.add_column("change", TextTable::Align::kLeft);
  t.add_column("category", TextTable::Align::kLeft);
  t.add_column("detector", TextTable::Align::kLeft);
  t.add_column("saving before (ms)");
  t.add_column("saving after (ms)");
  t.add_column("finding", TextTable::Align::kLeft);
  for (const auto& f : d.findings) {
    const std::string& title = f.change == diff::FindingChange::kResolved ? f.before.title : f.after.title;
    t.add_row({std::string(diff::to_string(f.change)), std::string(diagnose::to_string(f.category)), f.detector,
               saving_cell(f.before), saving_cell(f.after), shorten(title, o.title_width)});
  }
  return t.render();
}

std::string kernel_type(const diff::KernelDelta& d) {
  // Computation kernels by family (gemm, attention, ...), the rest by class.
  return std::string(d.cls == analysis::KernelClass::kComputation ? analysis::to_string(d.family)
                                                                   : analysis::to_string(d.cls));
}

// One table per kind of change, with the columns that kind has: one side for
// added / removed kernels, "before → after" for the rest.
std::string change_table(const diff::KernelChangeList& l, const DiffTerminalOptions& o) {
  using C = diff::KernelChange;
  TextTable t;
  t.add_column("kernel", TextTable::Align::kLeft);
  t.add_column("type", TextTable::Align::kLeft);
  if (l.change == C::kAdded || l.change == C::kRemoved) {
    t.add_column("calls");
    t.add_column("mean (µs)");
    t.add_column("time (ms)");
    for (const auto& d : l.top) {
      const diff::KernelSide& s = l.change == C::kAdded ? d.after : d.before;
      t.add_row({kernel_label(d.name, o.name_width), kernel_type(d), count_per_step(s.count_per_step), fmt_us(s.mean_us),
                 fmt_ms(s.us_per_step)});
    }
    return t.render(4);
  }
  t.add_column("calls");
  t.add_column("mean (µs)");
  t.add_column("mean change");
  t.add_column("time (ms)");
  t.add_column("time change (ms)");
  auto arrow = [](const std::string& x, const std::string& y) { return x + " → " + y; };
  for (const auto& d : l.top)
    t.add_row({kernel_label(d.name, o.name_width), kernel_type(d),
               arrow(count_per_step(d.before.count_per_step), count_per_step(d.after.count_per_step)),
               arrow(fmt_us(d.before.mean_us), fmt_us(d.after.mean_us)), signed_pct(d.mean_change_pct),
               arrow(fmt_ms(d.before.us_per_step), fmt_ms(d.after.us_per_step)), signed_ms(d.us_per_step_change)});
  return t.render(4);
}

std::string kernels_section(const DiffReport& r, const DiffTerminalOptions& o) {
  const auto& k = r.result.kernels;
  std::string out;
  for (const auto& l : k.lists) {
    if (l.kernels == 0) continue;
    out += fmt::format("  {}: {} kernel{}, {} ms per step{}\n", diff::to_string(l.change), l.kernels,
                       l.kernels == 1 ? "" : "s", signed_ms(l.us_per_step_change),
                       l.top.size() < l.kernels ? fmt::format(" (top {} by time change)", l.top.size()) : "");
    out += change_table(l, o);
  }
  out += fmt::format("  unchanged: {} kernel{}\n", k.unchanged, k.unchanged == 1 ? "" : "s");
  return out;
}

}  // namespace

std::string render_diff_terminal(const DiffReport& r, const DiffTerminalOptions& o) {
  const diff::DiffResult& d = r.result;
  std::string out = "stepscope diff\n";
  out += run_line("before", r.before_inputs, d.before);
  out += run_line("after ", r.after_inputs, d.after);
  for (const auto& w : r.warnings) out += "  warning: " + printable_text(w) + "\n";
  for (const auto& n : d.notes) out += "  note: " + printable_text(n) + "\n";

  out += section("Step time (mean per step; shares are of the step's wall time)");
  out += summary_table(d);

  out += section("Where step time went (attribution buckets, mean per step)");
  out += buckets_table(d);

  out += section(fmt::format("Findings: {} resolved, {} new, {} persisting (saving: estimated recoverable time per step)",
                             d.count(diff::FindingChange::kResolved), d.count(diff::FindingChange::kNew),
                             d.count(diff::FindingChange::kPersisting)));
  if (d.findings.empty()) {
    out += "  no findings above the reporting bar on either side\n";
  } else {
    out += findings_table(d, o);
  }

  out += section(fmt::format("Kernels by name (calls and time are per step; slower/faster: mean changed by more "
                             "than {:g}% and {:g} µs)",
                             r.options.kernel_mean_change_pct, r.options.kernel_mean_change_us));
  out += kernels_section(r, o);
  if (r.gate) out += section("Gate (--fail-if)") + "  " + printable_text(r.gate->line) + "\n";
  // Names went through printable_text; this pass keeps any missed one from
  // driving the terminal.
  return printable_lines(out);
}

}  // namespace stepscope::report
