#include "report/terminal_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/saturating.h"
#include "report/kernel_label.h"
#include "report/printable_text.h"
#include "report/terminal_text.h"
#include "report/text_table.h"

namespace stepscope::report {

namespace {

namespace dg = diagnose;

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

const dg::RankAttribution* attribution_of(const AnalyzeReport& r, int64_t rank) {
  if (!r.diagnosis) return nullptr;
  for (const auto& a : r.diagnosis->attribution)
    if (a.rank == rank) return &a;
  return nullptr;
}

const whatif::RankReplay* replay_of(const AnalyzeReport& r, int64_t rank) {
  if (!r.diagnosis) return nullptr;
  for (const auto& x : r.diagnosis->replay)
    if (x.rank == rank) return &x;
  return nullptr;
}

std::string line(std::string_view label, const std::string& text) {
  return wrap(text, kTerminalWidth, fmt::format("  {:<9}", label), "           ");
}

std::string step_line(const AnalyzeReport& r, const analysis::RankAnalysis& a, const std::string& who) {
  const dg::RankAttribution* att = attribution_of(r, a.rank);
  if (!r.diagnosis) {
    // Merged from summaries: no attribution; the ProfilerStep spans say the step.
    if (a.steps.steps.empty()) return line("step", "no ProfilerStep markers" + who);
    int64_t total = 0;
    for (const auto& st : a.steps.steps) total += st.cpu_duration_ns;
    return line("step", fmt::format("{} ms mean CPU span of {} ProfilerStep{}{} (no attribution without the diagnosis)",
                                    fmt_ms(us(total / static_cast<int64_t>(a.steps.steps.size()))),
                                    a.steps.steps.size(), a.steps.steps.size() == 1 ? "" : "s", who));
  }
  if (!att || att->total.wall_ns() <= 0) return line("step", "no step time attributed" + who);
  const bool steps = att->from_profiler_steps;
  std::string text = steps ? fmt::format("{} ms mean over {} profiled step{}{}", fmt_ms(us(att->mean_step_ns())),
                                         att->steps.size(), att->steps.size() == 1 ? "" : "s", who)
                           : fmt::format("{} ms of GPU activity, no ProfilerStep markers{}",
                                         fmt_ms(us(att->total.wall_ns())), who);
  const whatif::RankReplay* rp = replay_of(r, a.rank);
  if (rp && rp->unprofiled.estimated && rp->unprofiled.unprofiled_step_ns > 0) {
    const auto& u = rp->unprofiled;
    text += fmt::format("; {} ms without the profiler ({})", fmt_ms(us(u.unprofiled_step_ns)),
                        u.calibrated ? "calibrated to the measured step" : "estimated");
  }
  return line("step", text);
}

// The one idle figure of the default report: the attribution's idle buckets
// together, as a share of step time (docs/metrics.md, "GPU idle").
std::string gpu_line(const AnalyzeReport& r, const analysis::RankAnalysis& a) {
  const dg::RankAttribution* att = attribution_of(r, a.rank);
  if (!r.diagnosis) {
    // Merged from summaries: the temporal breakdown over the GPU span, not the step attribution.
    if (a.gpu_activities == 0) return line("GPU", "no GPU activity in the trace");
    const auto& t = a.temporal.rank;
    return line("GPU", fmt::format("idle {:.1f}% of the GPU span, compute {:.1f}%, non-compute {:.1f}% (temporal "
                                   "breakdown; the attribution needs the diagnosis)",
                                   t.idle_pct, t.compute_pct, t.non_compute_pct));
  }
  if (!att || !att->gpu_activity || att->total.wall_ns() <= 0) return line("GPU", "no GPU activity in the trace");
  const double wall = static_cast<double>(att->total.wall_ns());
  double idle_pct = 0;
  std::vector<std::pair<double, dg::Bucket>> idle;
  for (int b = 0; b < dg::kBucketCount; ++b) {
    const auto bucket = static_cast<dg::Bucket>(b);
    if (!dg::is_idle(bucket)) continue;
    const double pct = 100.0 * static_cast<double>(att->total.of(bucket)) / wall;
    idle_pct += pct;
    idle.emplace_back(pct, bucket);
  }
  std::stable_sort(idle.begin(), idle.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string parts;
  for (size_t i = 0; i < idle.size() && i < 2 && idle[i].first >= 1.0; ++i)
    parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", dg::to_string(idle[i].second), fmt_pct(idle[i].first));
  return line("GPU", fmt::format("idle {} of step time{}; effective compute {}", fmt_pct(idle_pct),
                                 parts.empty() ? "" : " (" + parts + ")",
                                 fmt_pct(100.0 * static_cast<double>(att->total.effective_compute_ns()) / wall)));
}

std::string kernels_line(const analysis::RankAnalysis& a) {
  if (a.gpu_activities == 0) return line("kernels", "none recorded");
  const analysis::KernelStat* top = nullptr;
  int64_t all_ns = 0;
  for (const auto& c : a.kernels.classes) {
    analysis::add_into(all_ns, c.duration.total_ns);  // saturating: durations near the limits add past int64
    for (const auto& k : c.top)
      if (k.distinct_names == 1 && (!top || k.duration.total_ns > top->duration.total_ns)) top = &k;
  }
  const size_t steps = std::max<size_t>(1, a.steps.steps.size());
  std::string text = fmt::format("{} GPU activities ({} per step)", fmt_count(a.gpu_activities),
                                 fmt_count(a.gpu_activities / static_cast<int64_t>(steps)));
  if (top && all_ns > 0)
    text += fmt::format("; largest: {} ({} of GPU time)", printable_text(kernel_label(top->name, 48)),
                        fmt_pct(100.0 * static_cast<double>(top->duration.total_ns) / static_cast<double>(all_ns)));
  return line("kernels", text);
}

std::string memory_line(const analysis::RankAnalysis& a) {
  const analysis::DeviceMemory* gpu = nullptr;
  for (const auto& d : a.memory.devices)
    if (d.device_type != 0 && (!gpu || d.peak_reserved_bytes > gpu->peak_reserved_bytes)) gpu = &d;
  if (!gpu) return line("memory", "no allocator samples (record with profile_memory=True)");
  return line("memory", fmt::format("peak {} allocated, {} reserved (gpu {})",
                                    fmt_bytes(static_cast<double>(gpu->peak_allocated_bytes)),
                                    fmt_bytes(static_cast<double>(gpu->peak_reserved_bytes)), gpu->device_id));
}

std::string ranks_line(const AnalyzeReport& r) {
  if (r.ranks.size() < 2) return line("ranks", "1 (comparisons across ranks need the traces of two or more)");
  int64_t fastest = -1, slowest = -1;
  int64_t min_ns = 0, max_ns = 0;
  if (r.diagnosis)
    for (const auto& a : r.diagnosis->attribution) {
      const int64_t s = a.mean_step_ns();
      if (s <= 0) continue;
      if (fastest < 0 || s < min_ns) min_ns = s, fastest = a.rank;
      if (slowest < 0 || s > max_ns) max_ns = s, slowest = a.rank;
    }
  std::string text = fmt::format("{}", r.ranks.size());
  if (slowest >= 0)
    text += fmt::format(": mean step {}-{} ms (fastest rank {}, slowest rank {})", fmt_ms(us(min_ns)), fmt_ms(us(max_ns)),
                        fastest, slowest);
  const auto& stragglers = r.multi.collectives.stragglers;
  if (!stragglers.empty()) text += fmt::format("; straggler at collectives: rank {}", stragglers.front());
  return line("ranks", text);
}

}  // namespace

const analysis::RankAnalysis& focus_rank(const AnalyzeReport& r) {
  const analysis::RankAnalysis* focus = &r.ranks.front();
  for (const auto& a : r.ranks)
    if (a.temporal.rank.kernel_time_ns > focus->temporal.rank.kernel_time_ns) focus = &a;
  return *focus;
}

std::string render_terminal_summary(const AnalyzeReport& r) {
  if (r.ranks.empty()) return "";
  const analysis::RankAnalysis& a = focus_rank(r);
  const std::string who = r.ranks.size() == 1 ? "" : fmt::format(" (rank {}, the longest GPU span)", a.rank);
  return "\nSummary\n" + step_line(r, a, who) + gpu_line(r, a) + kernels_line(a) + memory_line(a) + ranks_line(r);
}

}  // namespace stepscope::report
