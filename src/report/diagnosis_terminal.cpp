#include "report/diagnosis_terminal.h"

#include <fmt/format.h>

#include "report/text_table.h"

namespace stepscope::report {

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

std::string wrap(const std::string& text, size_t width, const std::string& indent) {
  std::string out, line;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  if (!line.empty()) out += indent + line + "\n";
  return out;
}

// The buckets table: one column pair per rank, rows for the groups with time.
std::string attribution_table(const dg::Diagnosis& d) {
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
      for (auto b : g.buckets) ns += a.total.of(b);
      any = any || ns > 0;
      double steps = a.steps.empty() ? 1.0 : static_cast<double>(a.steps.size());
      row.push_back(fmt_ms(us(ns) / steps));
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
  out += t.render();
  bool any_steps = false;
  for (const auto& a : d.attribution) any_steps = any_steps || a.from_profiler_steps;
  if (!any_steps) out += "  (no ProfilerStep markers: one window over the whole GPU span)\n";
  return out;
}

}  // namespace

std::string render_diagnosis_terminal(const dg::Diagnosis& d, size_t max_findings) {
  bool any_gpu = false;
  for (const auto& a : d.attribution) any_gpu = any_gpu || a.gpu_activity;
  std::string out;
  if (d.attribution.empty() || any_gpu) {
    out += attribution_table(d);
    out += fmt::format("\nPrimary bottleneck: {}   (effective compute {:.1f}% of step time)\n", d.primary_bottleneck,
                       d.effective_compute_pct);
  } else {
    // A CPU-only profile: the table would show 100% "other idle" of a GPU
    // that was never traced.
    out += "\nWhere step time went: not assessed: " +
           (d.no_gpu_activity_reason.empty()
                ? std::string("the traces have no GPU activity (kernels, copies) to attribute; profile with "
                              "ProfilerActivity.CUDA")
                : d.no_gpu_activity_reason) +
           "\n";
    out += fmt::format("\nPrimary bottleneck: {}   (no GPU activity in the traces)\n", d.primary_bottleneck);
  }
  if (d.findings.empty()) out += "  No finding explains a significant share of step time.\n";
  size_t n = 0;
  for (const auto& f : d.findings) {
    if (n++ == max_findings) {
      out += fmt::format("  ... {} more findings in the JSON/HTML report\n", d.findings.size() - max_findings);
      break;
    }
    std::string saving = f.saves_time ? fmt::format("saves up to {} ms/step ({:.1f}%)", fmt_ms(f.estimated_saving_us),
                                                    f.estimated_saving_pct)
                                      : std::string("risk, no time saving");
    out += fmt::format("\n  {}. [{}] {}\n", n, f.category == dg::Category::kHostOverhead ? "host_overhead"
                                                                                          : std::string(dg::to_string(f.category)),
                       f.title);
    out += fmt::format("     {}; severity {}, confidence {}\n", saving, dg::to_string(f.severity), dg::to_string(f.confidence));
    for (size_t e = 0; e < f.evidence.examples.size() && e < 2; ++e) {
      const auto& ex = f.evidence.examples[e];
      out += fmt::format("     e.g. rank {}{} at {} ms: {} — {}\n", ex.rank, ex.step >= 0 ? fmt::format(" step {}", ex.step) : "",
                         fmt_ms(us(ex.ts_ns)), shorten(ex.name, 50), ex.detail);
    }
    out += wrap("fix: " + f.remedy, 100, "     ");
  }
  if (!d.not_assessed.empty()) {
    out += "\n  Not assessed (the trace lacks what the check needs):\n";
    for (const auto& na : d.not_assessed) out += fmt::format("    {}: {} — {}\n", na.detector, na.what, na.reason);
  }
  return out;
}

}  // namespace stepscope::report
