// host_overhead: the GPU ran out of work because the host had not launched
// the next kernel yet (the host_overhead bucket: gaps closed by work whose
// launch call was still to come when the GPU went idle). Runs last and leaves
// out the idle earlier findings claimed (a for-loop optimizer, rebuilt
// tables, unfused ops), so its saving is what launch and framework overhead
// alone explain. Evidence separates launch-bound steps (kernels shorter than
// their launch calls, many tiny kernels) from Python-bound ones, and the
// remedy depends on what the run already uses: CUDA graph replays
// (cudaGraphLaunch) get no CUDA-graph advice, compiled runs get
// mode="reduce-overhead", eager runs get torch.compile.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "diagnose/detector_support.h"
#include "diagnose/detectors/detectors.h"
#include "analysis/saturating.h"

namespace stepscope::diagnose {

using analysis::add_into;
namespace {

constexpr const char* kName = "host_overhead";

// The op whose code launched a kernel: the outermost aten:: op above the
// launch call, else its innermost enclosing span.
std::string launcher_of(const RankView& r, uint32_t launch_row) {
  if (launch_row == HostTree::kNoRow) return "(unknown)";
  uint32_t best = HostTree::kNoRow, first = HostTree::kNoRow;
  for (uint32_t p = r.tree->parent(launch_row); p != HostTree::kNoRow; p = r.tree->parent(p)) {
    if (r.store->events.kind[p] == trace::EventKind::kPythonFunction) continue;
    if (first == HostTree::kNoRow) first = p;
    if (r.store->name_of(p).starts_with("aten::")) best = p;
    else if (best != HostTree::kNoRow) break;
  }
  uint32_t pick = best != HostTree::kNoRow ? best : first;
  return pick == HostTree::kNoRow ? std::string(r.store->name_of(launch_row)) : std::string(r.store->name_of(pick));
}

DetectorOutput run(const DetectorContext& ctx) {
  DetectorOutput out;
  const DiagnoseOptions& opt = *ctx.options;
  StepTimes saving = zero_step_times(ctx);
  int64_t raw_idle = 0, claimed = 0, kernels = 0, tiny = 0, shorter_than_launch = 0, launched = 0;
  int64_t launch_call_ns = 0, graph_launches = 0, triton = 0, steps_total = 0, busy_ns = 0, wall_ns = 0;
  std::vector<WeightedExample> examples;

  for (size_t ri = 0; ri < ctx.ranks.size(); ++ri) {
    const RankView& r = ctx.ranks[ri];
    const RankAttribution& a = *r.attribution;
    add_into(steps_total, static_cast<int64_t>(a.steps.size()));
    add_into(graph_launches, r.host->graph_launches);
    std::vector<int64_t> left = unclaimed_host_idle(ctx, ri, nullptr);
    for (size_t k = 0; k < a.steps.size(); ++k) {
      int64_t idle = a.steps[k].of(Bucket::kHostOverhead);
      add_into(raw_idle, idle);
      add_into(claimed, idle - left[k]);
      add_into(busy_ns, a.steps[k].wall_ns() - a.steps[k].idle_ns());
      add_into(wall_ns, a.steps[k].wall_ns());
      saving[ri][k] = left[k];
    }
    for (const auto& act : r.timeline->activities) {
      if (act.kind != trace::EventKind::kKernel || step_index_at(a, act.start_ns) < 0) continue;
      ++kernels;
      if (static_cast<double>(act.duration_ns()) < opt.tiny_kernel_us * 1e3) ++tiny;
      if (act.family == analysis::KernelFamily::kTriton) ++triton;
      if (!act.has_launch()) continue;
      ++launched;
      int64_t call = act.launch_end_ns - act.launch_start_ns;
      add_into(launch_call_ns, call);
      if (act.duration_ns() < call) ++shorter_than_launch;
    }
    // The largest gaps, with the op whose launch ended each (formatted only
    // for the few kept: a trace can hold millions of gaps).
    std::vector<const BucketSpan*> gaps;
    for (const BucketSpan& s : a.spans)
      if (s.bucket == Bucket::kHostOverhead) gaps.push_back(&s);
    size_t keep = std::min(gaps.size(), kMaxExamples);
    std::partial_sort(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(keep), gaps.end(),
                      [](const BucketSpan* x, const BucketSpan* y) {
                        return x->end_ns - x->start_ns > y->end_ns - y->start_ns;
                      });
    for (size_t i = 0; i < keep; ++i) {
      const BucketSpan& s = *gaps[i];
      Example e;
      e.rank = r.store->rank;
      e.step = a.steps[s.step_index].step;
      e.ts_ns = s.start_ns;
      e.dur_ns = s.end_ns - s.start_ns;
      e.name = launcher_of(r, s.cause_row);
      e.detail = fmt::format("GPU idle {} until the host launched {}", human_time(static_cast<double>(e.dur_ns)),
                             s.cause_row == HostTree::kNoRow ? "the next work" : std::string(r.store->name_of(s.cause_row)));
      examples.push_back({static_cast<double>(e.dur_ns), std::move(e)});
    }
  }
  int64_t left = raw_idle - claimed;
  if (left <= 0) return out;

  Finding f;
  f.category = Category::kHostOverhead;
  f.detector = kName;
  set_saving(f, ctx, saving);
  double steps = static_cast<double>(std::max<int64_t>(1, steps_total));
  double tiny_pct = kernels > 0 ? 100.0 * static_cast<double>(tiny) / static_cast<double>(kernels) : 0;
  double short_pct = launched > 0 ? 100.0 * static_cast<double>(shorter_than_launch) / static_cast<double>(launched) : 0;
  // Launch-bound: most kernels take less time on the GPU than the host needs to launch them.
  bool launch_bound = short_pct >= 50.0;
  bool graphs = graph_launches > 0;
  bool compiled = triton > 0;
  f.confidence = launch_bound ? Confidence::kHigh : Confidence::kMedium;
  const double per_step_kernels = static_cast<double>(kernels) / steps;
  f.title = fmt::format("GPU waits on the host {} per step ({:.0f}% of the step){}", human_time(f.estimated_saving_us * 1e3),
                        f.estimated_saving_pct,
                        launch_bound ? fmt::format(": launch-bound, {:.0f}% of kernels shorter than their launch call", short_pct)
                                     : fmt::format(": {:.0f} kernel{} per step, launched from Python", per_step_kernels,
                                                   std::lround(per_step_kernels) == 1 ? "" : "s"));
  auto& m = f.evidence.metrics;
  m.push_back({"gpu_idle_waiting_on_host_us_per_step", static_cast<double>(raw_idle) / steps / 1e3, "us"});
  m.push_back({"claimed_by_other_findings_us_per_step", static_cast<double>(claimed) / steps / 1e3, "us"});
  m.push_back({"gpu_busy_pct", wall_ns > 0 ? 100.0 * static_cast<double>(busy_ns) / static_cast<double>(wall_ns) : 0.0, "%"});
  m.push_back({"kernels_per_step", static_cast<double>(kernels) / steps, "count"});
  m.push_back({"tiny_kernel_pct", tiny_pct, "%"});
  m.push_back({"kernels_shorter_than_launch_pct", short_pct, "%"});
  m.push_back({"mean_launch_call_us", launched > 0 ? static_cast<double>(launch_call_ns) / static_cast<double>(launched) / 1e3 : 0.0, "us"});
  m.push_back({"cuda_graph_launches_per_step", static_cast<double>(graph_launches) / steps, "count"});
  m.push_back({"triton_kernel_pct", kernels > 0 ? 100.0 * static_cast<double>(triton) / static_cast<double>(kernels) : 0.0, "%"});
  f.evidence.examples = top_examples(std::move(examples));
  if (graphs)
    f.remedy = "CUDA graphs are already replayed (cudaGraphLaunch), so launches inside the graph cost nothing: the "
               "idle is host work outside the graph (input copies, .item(), Python between replays); move that work "
               "into the captured region, prefetch inputs into the graph's static buffers while the previous replay "
               "runs, or give each replay more work (larger batch).";
  else if (compiled)
    f.remedy = "The model is compiled but still launched kernel by kernel: use torch.compile(model, "
               "mode=\"reduce-overhead\") so the compiled graph replays as a CUDA graph, compile the optimizer step "
               "too, and raise the batch size so each kernel outlasts its launch.";
  else
    f.remedy = "Launch fewer, larger kernels: torch.compile(model) fuses small ops, and mode=\"reduce-overhead\" (or "
               "torch.cuda.graphs / make_graphed_callables for static shapes) replays the step as a CUDA graph; raise "
               "the batch size per step; keep Python work (logging, hooks, per-op checks) out of the step.";
  out.findings.push_back(std::move(f));
  return out;
}

}  // namespace

Detector host_overhead_detector() { return {kName, Category::kHostOverhead, run}; }

}  // namespace stepscope::diagnose
