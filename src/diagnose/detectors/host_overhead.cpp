// host_overhead: the GPU ran out of work because the host had not launched
// the next kernel yet (the host_overhead bucket: gaps closed by work whose
// launch call was still to come when the GPU went idle). Runs last and leaves
// out the idle earlier findings claimed (a for-loop optimizer, rebuilt
// tables, unfused ops), so its saving is what launch and framework overhead
// alone explain. Evidence separates launch-bound steps (kernels shorter than
// their launch calls, many tiny kernels) from Python-bound ones, and the
// remedy depends on what the run already uses: CUDA graph replays
// (cudaGraphLaunch) get no CUDA-graph advice, compiled runs get
// mode="reduce-overhead", eager runs get torch.compile. The gaps are split
// by cause (host_gap_cause.h): launch overhead proper, work queued behind a
// cross-stream dependency, host preprocessing before the step's first
// kernel, CUDA-graph capture; the title and the remedy follow the cause that
// holds most of the time, and the other causes' remedies follow.
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "diagnose/detector_support.h"
#include "diagnose/detectors/detectors.h"
#include "diagnose/part_json.h"
#include "diagnose/host_gap_cause.h"
#include "analysis/saturating.h"

namespace stepscope::diagnose {

using analysis::add_into;
namespace {

// Host time of a step replayed from a CUDA graph, as a share of its eager
// host time: a kernel launched from a graph costs the host about 0.5-1 µs
// against about 10 µs eager (measured on the H200: README, "Machines"), so a
// tenth. Used by the replay's remedy (docs/whatif.md, "Remedies").
constexpr double kGraphHostFactor = 0.1;

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

// What the finding needs of one rank, and of several merged.
struct Part : FindingPart {
  int64_t raw_idle = 0, claimed = 0, kernels = 0, tiny = 0, shorter_than_launch = 0, launched = 0;
  int64_t launch_call_ns = 0, graph_launches = 0, triton = 0, steps_total = 0, busy_ns = 0, wall_ns = 0;
  std::array<int64_t, kHostGapCauseCount> by_cause{};

  void merge(const Part& o) {
    merge_common(o);
    for (auto [to, from] : {std::pair{&raw_idle, o.raw_idle}, {&claimed, o.claimed}, {&kernels, o.kernels},
                            {&tiny, o.tiny}, {&shorter_than_launch, o.shorter_than_launch}, {&launched, o.launched},
                            {&launch_call_ns, o.launch_call_ns}, {&graph_launches, o.graph_launches},
                            {&triton, o.triton}, {&steps_total, o.steps_total}, {&busy_ns, o.busy_ns},
                            {&wall_ns, o.wall_ns}})
      add_into(*to, from);
    for (size_t c = 0; c < by_cause.size(); ++c) add_into(by_cause[c], o.by_cause[c]);
  }
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Part, saving, examples, replay, raw_idle, claimed, kernels, tiny, shorter_than_launch,
                                   launched, launch_call_ns, graph_launches, triton, steps_total, busy_ns, wall_ns,
                                   by_cause)

Part collect(const RankContext& rc) {
  const RankView& r = *rc.view;
  const DiagnoseOptions& opt = *rc.options;
  const RankAttribution& a = *r.attribution;
  Part out;
  std::vector<int64_t> saving(a.steps.size(), 0);
  out.steps_total = static_cast<int64_t>(a.steps.size());
  out.graph_launches = r.host->graph_launches;
  std::vector<int64_t> left = unclaimed_host_idle(rc, nullptr);
  for (size_t k = 0; k < a.steps.size(); ++k) {
    int64_t idle = a.steps[k].of(Bucket::kHostOverhead);
    add_into(out.raw_idle, idle);
    add_into(out.claimed, idle - left[k]);
    add_into(out.busy_ns, a.steps[k].wall_ns() - a.steps[k].idle_ns());
    add_into(out.wall_ns, a.steps[k].wall_ns());
    saving[k] = left[k];
  }
  for (const auto& act : r.timeline->activities) {
    if (act.kind != trace::EventKind::kKernel || step_index_at(a, act.start_ns) < 0) continue;
    ++out.kernels;
    if (static_cast<double>(act.duration_ns()) < opt.tiny_kernel_us * 1e3) ++out.tiny;
    if (act.family == analysis::KernelFamily::kTriton) ++out.triton;
    if (!act.has_launch()) continue;
    ++out.launched;
    int64_t call = act.launch_end_ns - act.launch_start_ns;
    add_into(out.launch_call_ns, call);
    if (act.duration_ns() < call) ++out.shorter_than_launch;
  }
  // The largest gaps, with the op whose launch ended each (formatted only
  // for the few kept: a trace can hold millions of gaps).
  const HostGapClassifier causes(*r.store, *r.timeline, a);
  std::vector<const BucketSpan*> gaps;
  for (const BucketSpan& s : a.spans) {
    if (s.bucket != Bucket::kHostOverhead) continue;
    gaps.push_back(&s);
    const auto parts = causes.split(s);
    for (int c = 0; c < kHostGapCauseCount; ++c)
      add_into(out.by_cause[static_cast<size_t>(c)], parts[static_cast<size_t>(c)]);
  }
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
    const auto parts = causes.split(s);
    const auto main = static_cast<HostGapCause>(std::max_element(parts.begin(), parts.end()) - parts.begin());
    const std::string launch =
        s.cause_row == HostTree::kNoRow ? "the next work" : std::string(r.store->name_of(s.cause_row));
    switch (main) {
      case HostGapCause::kStreamWait:
        e.detail = fmt::format("GPU idle {}: {} was launched but waited {} on a dependency (another stream's event)",
                               human_time(static_cast<double>(e.dur_ns)), launch,
                               human_time(static_cast<double>(parts[static_cast<size_t>(HostGapCause::kStreamWait)])));
        break;
      case HostGapCause::kPreprocessing:
        e.detail = fmt::format("GPU idle {} before the step's first kernel: host work ahead of the step's GPU work",
                               human_time(static_cast<double>(e.dur_ns)));
        break;
      case HostGapCause::kGraphCapture:
        e.detail = fmt::format("GPU idle {} while a CUDA graph was captured or instantiated (one-time cost)",
                               human_time(static_cast<double>(e.dur_ns)));
        break;
      case HostGapCause::kLaunchOverhead:
        e.detail = fmt::format("GPU idle {} until the host launched {}", human_time(static_cast<double>(e.dur_ns)), launch);
        break;
    }
    out.examples.add(static_cast<double>(e.dur_ns), std::move(e));
  }
  // The step as a CUDA graph (or compiled with reduce-overhead) costs the
  // host a fraction of its eager time. As the bound leaves out idle other
  // findings claim, the remedy leaves their host time alone: they price it
  // themselves.
  // It is the finding's remedy only when launch overhead is the main cause
  // over all ranks and no rank replays graphs (finish decides).
  RankRemedy fix{r.store->rank, {}};
  fix.remedy.host_time_factor = kGraphHostFactor;
  fix.remedy.host_scale_excluded = rc.priced_host;
  out.remedies.push_back(std::move(fix));
  out.saving = RankSaving::of(r, saving);
  out.examples.trim();
  return out;
}

DetectorOutput finish(const Part& p, const JobContext&) {
  DetectorOutput out;
  const int64_t raw_idle = p.raw_idle, claimed = p.claimed, kernels = p.kernels, launched = p.launched;
  const auto& by_cause = p.by_cause;
  int64_t left = raw_idle - claimed;
  if (left <= 0) return out;

  Finding f;
  f.category = Category::kHostOverhead;
  f.detector = kName;
  p.fill(f);
  double steps = static_cast<double>(std::max<int64_t>(1, p.steps_total));
  double tiny_pct = kernels > 0 ? 100.0 * static_cast<double>(p.tiny) / static_cast<double>(kernels) : 0;
  double short_pct =
      launched > 0 ? 100.0 * static_cast<double>(p.shorter_than_launch) / static_cast<double>(launched) : 0;
  // Launch-bound: most kernels take less time on the GPU than the host needs to launch them.
  bool launch_bound = short_pct >= 50.0;
  bool graphs = p.graph_launches > 0;
  bool compiled = p.triton > 0;
  f.confidence = launch_bound ? Confidence::kHigh : Confidence::kMedium;
  const double per_step_kernels = static_cast<double>(kernels) / steps;
  const auto cause_ns = [&](HostGapCause c) { return by_cause[static_cast<size_t>(c)]; };
  const auto main_cause =
      static_cast<HostGapCause>(std::max_element(by_cause.begin(), by_cause.end()) - by_cause.begin());
  std::string why;
  switch (main_cause) {
    case HostGapCause::kStreamWait:
      why = ", mostly on work already launched but queued behind a cross-stream dependency, not on the host";
      break;
    case HostGapCause::kPreprocessing:
      why = ": mostly host work before the step's first kernel (preprocessing), not launch overhead";
      break;
    case HostGapCause::kGraphCapture:
      why = ": mostly CUDA-graph capture and instantiation, a one-time cost";
      break;
    case HostGapCause::kLaunchOverhead:
      why = launch_bound ? fmt::format(": launch-bound, {:.0f}% of kernels shorter than their launch call", short_pct)
                         : fmt::format(": {:.0f} kernel{} per step, launched from Python", per_step_kernels,
                                       std::lround(per_step_kernels) == 1 ? "" : "s");
      break;
  }
  // A stream wait is not the host's: the title does not say the GPU waits on it.
  f.title = main_cause == HostGapCause::kStreamWait
                ? fmt::format("GPU idle {} per step ({:.0f}% of the step){}", human_time(f.estimated_saving_us * 1e3),
                              f.estimated_saving_pct, why)
                : fmt::format("GPU waits on the host {} per step ({:.0f}% of the step){}",
                              human_time(f.estimated_saving_us * 1e3), f.estimated_saving_pct, why);
  auto& m = f.evidence.metrics;
  m.push_back({"gpu_idle_waiting_on_host_us_per_step", static_cast<double>(raw_idle) / steps / 1e3, "us"});
  m.push_back({"claimed_by_other_findings_us_per_step", static_cast<double>(claimed) / steps / 1e3, "us"});
  m.push_back({"gpu_busy_pct",
               p.wall_ns > 0 ? 100.0 * static_cast<double>(p.busy_ns) / static_cast<double>(p.wall_ns) : 0.0, "%"});
  m.push_back({"kernels_per_step", static_cast<double>(kernels) / steps, "count"});
  m.push_back({"tiny_kernel_pct", tiny_pct, "%"});
  m.push_back({"kernels_shorter_than_launch_pct", short_pct, "%"});
  m.push_back({"mean_launch_call_us",
               launched > 0 ? static_cast<double>(p.launch_call_ns) / static_cast<double>(launched) / 1e3 : 0.0, "us"});
  m.push_back({"cuda_graph_launches_per_step", static_cast<double>(p.graph_launches) / steps, "count"});
  m.push_back({"triton_kernel_pct",
               kernels > 0 ? 100.0 * static_cast<double>(p.triton) / static_cast<double>(kernels) : 0.0, "%"});
  // The bucket's idle by cause (they sum to gpu_idle_waiting_on_host_us_per_step).
  for (int c = 0; c < kHostGapCauseCount; ++c)
    m.push_back({fmt::format("{}_us_per_step", to_string(static_cast<HostGapCause>(c))),
                 static_cast<double>(by_cause[static_cast<size_t>(c)]) / steps / 1e3, "us"});
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
  // The remedies of the other causes, for those holding a tenth of the idle or more.
  const auto share = [&](HostGapCause c) {
    return raw_idle > 0 ? static_cast<double>(cause_ns(c)) / static_cast<double>(raw_idle) : 0.0;
  };
  const std::string launch_remedy = f.remedy;
  std::vector<std::string> parts;
  auto add = [&](HostGapCause c, const std::string& text) {
    if (c == main_cause || share(c) >= 0.1)
      parts.push_back(c == main_cause ? text : fmt::format("For {:.0f}% of this idle: {}", 100.0 * share(c), text));
  };
  // The main cause first; launch overhead's remedy is the one chosen above.
  auto remedy = [&](HostGapCause c) { return c == HostGapCause::kLaunchOverhead ? launch_remedy : std::string(remedy_of(c)); };
  add(main_cause, remedy(main_cause));
  for (int c = 0; c < kHostGapCauseCount; ++c)
    if (static_cast<HostGapCause>(c) != main_cause) add(static_cast<HostGapCause>(c), remedy(static_cast<HostGapCause>(c)));
  f.remedy.clear();
  for (const std::string& p : parts) f.remedy += (f.remedy.empty() ? "" : " ") + p;
  if (main_cause != HostGapCause::kLaunchOverhead) f.confidence = Confidence::kMedium;
  // The remedy as a graph change, for launch overhead without graphs yet
  // (other causes keep the bound).
  if (main_cause != HostGapCause::kLaunchOverhead || graphs) {
    f.remedies.clear();
    f.replay_pick = {};
  }
  out.findings.push_back(std::move(f));
  return out;
}

}  // namespace

Detector host_overhead_detector() { return split_detector<Part>(kName, Category::kHostOverhead, collect, finish); }

}  // namespace stepscope::diagnose
