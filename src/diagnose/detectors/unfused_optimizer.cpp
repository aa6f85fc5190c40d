// unfused_optimizer: torch.optim with foreach=False and fused=False updates
// one parameter tensor at a time, launching a chain of small elementwise
// kernels per tensor. Recognised from the kernels launched inside
// Optimizer.step#... : many per step (at least kMinKernels) and almost none of
// them multi-tensor kernels (multi_tensor_apply, fused Adam). The cost is the
// GPU idle, waiting on the host, inside the optimizer step; it is claimed so
// host_overhead does not count it again. The GPU time of the small kernels
// themselves is not counted (what a fused kernel would take is unknown).
#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "diagnose/detector_support.h"
#include "diagnose/detectors/detectors.h"
#include "diagnose/part_json.h"
#include "analysis/saturating.h"

namespace stepscope::diagnose {

using analysis::add_into;
namespace {

constexpr const char* kName = "unfused_optimizer";
// A per-parameter loop over even a small model (a few tensors, ~8 kernels
// each) launches this many kernels; a foreach/fused step launches a handful.
constexpr double kMinKernelsPerStep = 32;
// Multi-tensor kernels cover many parameters each; below this share of the
// optimizer's kernels the update is a per-tensor loop.
constexpr double kMaxMultiTensorShare = 0.10;

bool is_multi_tensor(const analysis::GpuActivity& a, std::string_view name) {
  return a.family == analysis::KernelFamily::kOptimizer || name.find("multi_tensor") != std::string_view::npos ||
         name.find("foreach") != std::string_view::npos;
}

// "Optimizer.step#AdamW.step" -> "AdamW".
std::string optimizer_class(std::string_view annotation) {
  auto hash = annotation.find('#');
  if (hash == std::string_view::npos) return "the optimizer";
  std::string_view rest = annotation.substr(hash + 1);
  auto dot = rest.find('.');
  return std::string(rest.substr(0, dot));
}

// What the finding needs of one rank, and of several merged.
struct Part : FindingPart {
  bool any_annotation = false;
  int64_t spans = 0, kernels = 0, multi = 0, tiny = 0, host_ns = 0, idle_ns = 0, steps_total = 0;
  std::string cls;  // the optimizer's class, as the first rank with one names it

  void merge(const Part& o) {
    merge_common(o);
    any_annotation = any_annotation || o.any_annotation;
    for (auto [to, from] : {std::pair{&spans, o.spans}, {&kernels, o.kernels}, {&multi, o.multi}, {&tiny, o.tiny},
                            {&host_ns, o.host_ns}, {&idle_ns, o.idle_ns}, {&steps_total, o.steps_total}})
      add_into(*to, from);
    if (cls.empty()) cls = o.cls;
  }
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Part, saving, examples, replay, any_annotation, spans, kernels, multi, tiny, host_ns,
                                   idle_ns, steps_total, cls)

Part collect(const RankContext& rc) {
  const RankView& r = *rc.view;
  const RankAttribution& a = *r.attribution;
  Part out;
  std::vector<int64_t> saving(a.steps.size(), 0);
  // Every rank takes part in the choice of the saving's rank, with none here.
  out.saving = RankSaving::of(r, saving);
  const HostCalls& opt = r.host->optimizer_steps;
  if (opt.empty()) return out;
  out.any_annotation = true;
  const double tiny_ns = rc.options->tiny_kernel_us * 1e3;
  int64_t rank_spans = 0, rank_kernels = 0, rank_multi = 0, rank_host_ns = 0;
  std::map<uint32_t, int64_t> kernels_by_span;
  for (const auto& act : r.timeline->activities) {
    if (act.kind != trace::EventKind::kKernel || !act.has_launch()) continue;
    const HostCall* c = opt.containing(act.launch_start_ns);
    if (!c || step_index_at(a, c->start_ns) < 0) continue;
    ++rank_kernels;
    ++kernels_by_span[c->row];
    if (is_multi_tensor(act, r.store->strings.get(act.name))) ++rank_multi;
    if (static_cast<double>(act.duration_ns()) < tiny_ns) ++out.tiny;
  }
  for (const HostCall& c : opt.calls())
    if (step_index_at(a, c.start_ns) >= 0) {
      ++rank_spans;
      add_into(rank_host_ns, c.end_ns - c.start_ns);
      if (out.cls.empty()) out.cls = optimizer_class(r.store->name_of(c.row));
    }
  if (rank_spans == 0) return out;
  double per_step = static_cast<double>(rank_kernels) / static_cast<double>(rank_spans);
  double share = rank_kernels > 0 ? static_cast<double>(rank_multi) / static_cast<double>(rank_kernels) : 1.0;
  out.spans = rank_spans;
  out.kernels = rank_kernels;
  out.multi = rank_multi;
  out.host_ns = rank_host_ns;
  out.steps_total = static_cast<int64_t>(a.steps.size());
  if (per_step < kMinKernelsPerStep || share >= kMaxMultiTensorShare) return out;

  // Host-caused idle inside the optimizer steps.
  IntervalSet opt_set = opt.as_set();
  std::vector<Interval> counted;
  std::vector<int64_t> per_step_idle = unclaimed_host_idle(rc, &opt_set, &counted);
  for (size_t k = 0; k < a.steps.size(); ++k) {
    add_into(saving[k], per_step_idle[k]);
    add_into(out.idle_ns, per_step_idle[k]);
  }
  for (const Interval& i : counted) out.claims.push_back({r.store->rank, i.start_ns, i.end_ns});
  // The remedy on this rank: a fused (or foreach) optimizer step. Its host
  // time leaves the step, and the step's kernels on each stream run as one
  // kernel of their summed time (an upper bound: a fused kernel reads the
  // same bytes in one pass, faster than the sum).
  RankRemedy fix{r.store->rank, {}};
  for (const HostCall& c : opt.calls())
    if (step_index_at(a, c.start_ns) >= 0) fix.remedy.host_removed.push_back({c.start_ns, c.end_ns});
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> chains;  // (span row, lane) -> kernel rows
  for (const auto& act : r.timeline->activities) {
    if (act.kind != trace::EventKind::kKernel || !act.has_launch()) continue;
    const HostCall* c = opt.containing(act.launch_start_ns);
    if (c && step_index_at(a, c->start_ns) >= 0) chains[{c->row, act.lane}].push_back(act.row);
  }
  for (auto& [key, rows] : chains)
    if (rows.size() > 1) fix.remedy.fused_chains.push_back(std::move(rows));
  if (!fix.remedy.empty()) out.remedies.push_back(std::move(fix));
  for (const HostCall& c : opt.calls()) {
    if (step_index_at(a, c.start_ns) < 0) continue;
    int64_t idle = 0;
    for (const BucketSpan& s : a.spans)
      if (s.bucket == Bucket::kHostOverhead && s.end_ns > c.start_ns && s.start_ns < c.end_ns)
        add_into(idle, std::min(s.end_ns, c.end_ns) - std::max(s.start_ns, c.start_ns));
    int64_t nk = kernels_by_span.count(c.row) ? kernels_by_span[c.row] : 0;
    out.examples.add(static_cast<double>(idle),
                     example_of_row(r, c.row,
                                    fmt::format("{} kernels launched one parameter at a time; GPU idle {} of "
                                                "the step's {}",
                                                nk, human_time(static_cast<double>(idle)),
                                                human_time(static_cast<double>(c.end_ns - c.start_ns)))));
  }
  out.saving = RankSaving::of(r, saving);
  out.examples.trim();
  return out;
}

DetectorOutput finish(const Part& p, const JobContext&) {
  DetectorOutput out;
  if (!p.any_annotation) {
    out.not_assessed.push_back({kName, "optimizer step cost",
                                "no Optimizer.step#... annotations (a custom optimizer loop, or the profiler's "
                                "record_function hooks off)"});
    return out;
  }
  if (p.idle_ns <= 0) return out;

  const std::string cls = p.cls;
  Finding f;
  f.category = Category::kUnfusedOptimizer;
  f.detector = kName;
  f.confidence = Confidence::kHigh;
  p.fill(f);
  double n = static_cast<double>(std::max<int64_t>(1, p.spans));
  double steps = static_cast<double>(std::max<int64_t>(1, p.steps_total));
  f.title = fmt::format("{} updates parameters one tensor at a time: {:.0f} kernels per step, GPU idle {} per step "
                        "inside the optimizer",
                        cls, static_cast<double>(p.kernels) / n, human_time(f.estimated_saving_us * 1e3));
  auto& m = f.evidence.metrics;
  m.push_back({"optimizer_steps", static_cast<double>(p.spans), "count"});
  m.push_back({"optimizer_kernels_per_step", static_cast<double>(p.kernels) / n, "count"});
  m.push_back({"multi_tensor_kernel_share_pct",
               p.kernels > 0 ? 100.0 * static_cast<double>(p.multi) / static_cast<double>(p.kernels) : 0.0, "%"});
  m.push_back({"tiny_kernel_share_pct",
               p.kernels > 0 ? 100.0 * static_cast<double>(p.tiny) / static_cast<double>(p.kernels) : 0.0, "%"});
  m.push_back({"optimizer_host_us_per_step", static_cast<double>(p.host_ns) / n / 1e3, "us"});
  m.push_back({"gpu_idle_in_optimizer_us_per_step", static_cast<double>(p.idle_ns) / steps / 1e3, "us"});
  f.remedy = fmt::format("Use the multi-tensor implementation: torch.optim.{}(params, ..., fused=True) (or "
                         "foreach=True), which updates all parameters in a few kernels; under torch.compile the "
                         "optimizer step can be compiled too.",
                         cls == "the optimizer" ? std::string("AdamW") : cls);
  out.findings.push_back(std::move(f));
  return out;
}

}  // namespace

Detector unfused_optimizer_detector() {
  return split_detector<Part>(kName, Category::kUnfusedOptimizer, collect, finish);
}

}  // namespace stepscope::diagnose
