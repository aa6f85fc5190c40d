// data_pipeline: the GPU waits for input. Two costs, both read off the
// attribution: GPU idle while the host is inside a DataLoader __next__ (the
// data_pipeline_wait bucket, plus in a host-bound step the host_overhead idle
// after a call up to the time it took while the GPU still worked: see
// host_delay.h), and host-to-device copies that run while no
// kernel computes (exposed copies on the critical path; pinned memory with
// non_blocking=True lets them overlap). Pageable copies are named because
// they also block the host for their whole length.
#include <fmt/core.h>

#include <map>

#include "diagnose/detector_support.h"
#include "diagnose/detectors/detectors.h"
#include "diagnose/part_json.h"
#include "diagnose/host_delay.h"
#include "diagnose/loader_work.h"
#include "analysis/saturating.h"

namespace stepscope::diagnose {

using analysis::add_into;
namespace {

constexpr const char* kName = "data_pipeline";
// The loader's work of one kind must be at least this share of its time for
// the finding to name that kind's remedy: below it the kind is not what
// makes batches late.
constexpr double kWorkSharePct = 25.0;

// The remedies for each kind of loader work, with their measured effect
// (docs/performance.md, "Token batches (stepscope.data)", 2026-12-05, and
// docs/kernels.md, "Image augmentation", 2026-12-05).
std::string work_remedy(LoaderWork w) {
  switch (w) {
    case LoaderWork::kTokenize:
    case LoaderWork::kParse:
      return "do the tokenizing and parsing once, offline: write the data as token shards "
             "(stepscope.data.write_token_shards) and read them with stepscope.data.TokenShardDataset, whose "
             "batches came 4.5x faster at the median than a pandas Dataset's and 10x faster than Hugging Face "
             "datasets' on the same data (docs/performance.md, 2026-12-05)";
    case LoaderWork::kImage:
      return "decode and augment the images on the GPU: stepscope_kernels.GpuAugment (nvJPEG decode and one fused "
             "crop/flip/color-jitter/normalize kernel; docs/kernels.md), which produced 15.4x the images/s of "
             "torchvision's CPU transforms in 16 DataLoader workers and 3.6x those of transforms.v2 on the GPU "
             "on 1080p JPEGs (30.8x and 15.1x on ImageNet-sized ones; H200, 2026-12-05), fed ahead of the step "
             "by stepscope_kernels.GpuFeed";
  }
  return "";
}

bool is_htod(std::string_view name) { return name.starts_with("Memcpy HtoD"); }
bool is_pageable(std::string_view name) { return name.find("Pageable") != std::string_view::npos; }

// What the finding needs of one rank, and of several merged.
struct Part : FindingPart {
  int64_t loader_calls = 0, loader_host_ns = 0, loader_idle_ns = 0, single_process = 0;
  int64_t htod = 0, pageable = 0, pageable_bytes = 0, htod_ns = 0, exposed_htod_ns = 0;
  int64_t steps_total = 0, lead_lost_ns = 0, later_idle_ns = 0;
  LoaderWorkTime work;  // what the loader spends its time on

  void merge(const Part& o) {
    merge_common(o);
    for (auto [to, from] : {std::pair{&loader_calls, o.loader_calls}, {&loader_host_ns, o.loader_host_ns},
                            {&loader_idle_ns, o.loader_idle_ns}, {&single_process, o.single_process},
                            {&htod, o.htod}, {&pageable, o.pageable}, {&pageable_bytes, o.pageable_bytes},
                            {&htod_ns, o.htod_ns}, {&exposed_htod_ns, o.exposed_htod_ns},
                            {&steps_total, o.steps_total}, {&lead_lost_ns, o.lead_lost_ns},
                            {&later_idle_ns, o.later_idle_ns}})
      add_into(*to, from);
    for (size_t k = 0; k < kLoaderWorkKinds; ++k) add_into(work.ns[k], o.work.ns[k]);
    add_into(work.calls_ns, o.work.calls_ns);
    work.saw_python_frames = work.saw_python_frames || o.work.saw_python_frames;
  }
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Part, saving, examples, replay, loader_calls, loader_host_ns, loader_idle_ns,
                                   single_process, htod, pageable, pageable_bytes, htod_ns, exposed_htod_ns,
                                   steps_total, lead_lost_ns, later_idle_ns, work)

Part collect(const RankContext& rc) {
  const RankView& r = *rc.view;
  const RankAttribution& a = *r.attribution;
  Part out;
  std::vector<int64_t> saving(a.steps.size(), 0);
  out.steps_total = static_cast<int64_t>(a.steps.size());
  // GPU idle inside DataLoader calls, per call and per step.
  std::map<uint32_t, int64_t> idle_by_call;
  std::vector<Interval> copy_spans;
  for (const BucketSpan& s : a.spans) {
    if (s.bucket == Bucket::kDataPipeline) {
      add_into(saving[s.step_index], s.end_ns - s.start_ns);
      add_into(idle_by_call[s.cause_row], s.end_ns - s.start_ns);
      add_into(out.loader_idle_ns, s.end_ns - s.start_ns);
    } else if (s.bucket == Bucket::kMemoryCopy) {
      copy_spans.push_back({s.start_ns, s.end_ns});
    }
  }
  std::vector<HostDelay> delays;
  // The remedy on this rank: batches come from worker processes, prefetched
  // (the DataLoader's host time leaves the step), and copies from pinned
  // memory return at once.
  RankRemedy fix{r.store->rank, {}};
  for (const HostCall& c : r.host->dataloader.calls()) {
    const int32_t si = step_index_at(a, c.start_ns);
    if (si < 0) continue;
    fix.remedy.host_removed.push_back({c.start_ns, c.end_ns});
    ++out.loader_calls;
    add_into(out.loader_host_ns, c.end_ns - c.start_ns);
    const int64_t lead = gpu_busy_within(a, c.start_ns, c.end_ns);
    add_into(out.lead_lost_ns, lead);
    delays.push_back({c.start_ns, static_cast<uint32_t>(si), lead});
    std::string_view name = r.store->name_of(c.row);
    if (name.find("SingleProcess") != std::string_view::npos) ++out.single_process;
    int64_t idle = idle_by_call.count(c.row) ? idle_by_call[c.row] : 0;
    out.examples.add(static_cast<double>(idle),
                     example_of_row(r, c.row,
                                    fmt::format("GPU idle {} of this {} call", human_time(static_cast<double>(idle)),
                                                human_time(static_cast<double>(c.end_ns - c.start_ns)))));
  }
  out.later_idle_ns = claim_idle_after(rc, std::move(delays), saving, out.claims);
  // Host-to-device copies and the part of them no kernel hides.
  IntervalSet exposed(copy_spans);
  const trace::StringId bytes_key = r.store->strings.find("bytes");
  for (const auto& act : r.timeline->activities) {
    std::string_view name = r.store->strings.get(act.name);
    if (act.kind != trace::EventKind::kMemcpy || !is_htod(name)) continue;
    int32_t si = step_index_at(a, act.start_ns);
    if (si < 0) continue;
    ++out.htod;
    add_into(out.htod_ns, act.duration_ns());
    int64_t ex = exposed.overlap(act.start_ns, act.end_ns);
    add_into(out.exposed_htod_ns, ex);
    add_into(saving[static_cast<size_t>(si)], ex);
    int64_t bytes = 0;
    if (bytes_key != trace::StringTable::kMissing) bytes = r.store->arg_int(act.row, bytes_key).value_or(0);
    if (is_pageable(name)) {
      if (act.has_launch()) fix.remedy.host_removed.push_back({act.launch_start_ns, act.launch_end_ns});
      ++out.pageable;
      add_into(out.pageable_bytes, bytes);
    }
    if (ex > 0 || is_pageable(name))
      out.examples.add(static_cast<double>(ex),
                       example_of_row(r, act.row,
                                      fmt::format("{} B copied{}; {} of it with no kernel running", bytes,
                                                  is_pageable(name) ? " from pageable memory" : "",
                                                  human_time(static_cast<double>(ex)))));
  }
  if (!fix.remedy.empty()) out.remedies.push_back(std::move(fix));
  out.work = loader_work_time(r);
  out.saving = RankSaving::of(r, saving);
  out.examples.trim();
  return out;
}

DetectorOutput finish(const Part& p, const JobContext&) {
  DetectorOutput out;
  const LoaderWorkTime& work = p.work;
  const bool any_loader = p.loader_calls > 0;
  if (any_loader && !work.saw_python_frames)
    out.not_assessed.push_back({kName, "what the DataLoader spends its time on (images, tokenizing, parsing)",
                                "no Python frames inside its calls (profile with with_stack=True)"});
  if (!any_loader)
    out.not_assessed.push_back({kName, "GPU idle while the DataLoader runs",
                                "no DataLoader __next__ spans in the steps (the loop does not iterate a "
                                "torch.utils.data.DataLoader): time spent producing batches shows up as host_overhead"});
  const int64_t loader_ns = analysis::saturating_add(p.loader_idle_ns, p.later_idle_ns);
  const int64_t total = analysis::saturating_add(loader_ns, p.exposed_htod_ns);
  if (total <= 0) return out;

  Finding f;
  f.category = Category::kDataPipeline;
  f.detector = kName;
  p.fill(f);
  double steps = static_cast<double>(std::max<int64_t>(1, p.steps_total));
  if (loader_ns >= p.exposed_htod_ns) {
    f.title = fmt::format("GPU idle while the DataLoader produces batches: {} per step ({:.0f}% of the step)",
                          human_time(f.estimated_saving_us * 1e3), f.estimated_saving_pct);
    f.confidence = Confidence::kHigh;
  } else {
    f.title = fmt::format("Host-to-device copies on the critical path: {} per step with no kernel running ({:.0f}% "
                          "of the step)",
                          human_time(f.estimated_saving_us * 1e3), f.estimated_saving_pct);
    f.confidence = Confidence::kMedium;
  }
  auto& m = f.evidence.metrics;
  m.push_back({"dataloader_calls_per_step", static_cast<double>(p.loader_calls) / steps, "count"});
  m.push_back({"dataloader_host_us_per_step", static_cast<double>(p.loader_host_ns) / steps / 1e3, "us"});
  m.push_back({"gpu_idle_in_dataloader_us_per_step", static_cast<double>(p.loader_idle_ns) / steps / 1e3, "us"});
  m.push_back({"host_time_while_gpu_busy_us_per_step", static_cast<double>(p.lead_lost_ns) / steps / 1e3, "us"});
  m.push_back({"later_host_idle_claimed_us_per_step", static_cast<double>(p.later_idle_ns) / steps / 1e3, "us"});
  m.push_back({"htod_copies_per_step", static_cast<double>(p.htod) / steps, "count"});
  m.push_back({"pageable_htod_copies_per_step", static_cast<double>(p.pageable) / steps, "count"});
  m.push_back({"pageable_htod_bytes_per_step", static_cast<double>(p.pageable_bytes) / steps, "B"});
  m.push_back({"htod_copy_us_per_step", static_cast<double>(p.htod_ns) / steps / 1e3, "us"});
  m.push_back({"exposed_htod_copy_us_per_step", static_cast<double>(p.exposed_htod_ns) / steps / 1e3, "us"});
  size_t top_work = 0;
  for (size_t k = 0; k < kLoaderWorkKinds; ++k) {
    const double pct = work.calls_ns > 0 ? 100.0 * static_cast<double>(work.ns[k]) / static_cast<double>(work.calls_ns) : 0;
    m.push_back({fmt::format("dataloader_time_in_{}_pct", to_string(static_cast<LoaderWork>(k))), pct, "%"});
    if (work.ns[k] > work.ns[top_work]) top_work = k;
  }
  const bool named_work = work.calls_ns > 0 && 100.0 * static_cast<double>(work.ns[top_work]) /
                                                   static_cast<double>(work.calls_ns) >= kWorkSharePct;

  std::string remedy;
  if (loader_ns > 0) {
    remedy = p.single_process > 0
                 ? "The DataLoader runs in the training process (num_workers=0): use DataLoader(..., num_workers=N "
                   "(4-8 per GPU), persistent_workers=True, prefetch_factor=2) so batches are built while the GPU "
                   "runs"
                 : "Give the DataLoader more workers or a larger prefetch_factor so a batch is always ready";
    remedy += named_work ? "; " + work_remedy(static_cast<LoaderWork>(top_work))
                         : "; move heavy per-sample work (tokenisation, decoding, augmentation) offline or into the "
                           "workers";
  }
  if (p.pageable > 0 || p.exposed_htod_ns > 0) {
    if (!remedy.empty()) remedy += "; ";
    remedy += "copy batches from pinned memory without blocking: DataLoader(pin_memory=True) and "
              "batch.to('cuda', non_blocking=True), ideally one step ahead on a side stream";
  }
  f.remedy = remedy + ".";
  out.findings.push_back(std::move(f));
  return out;
}

}  // namespace

Detector data_pipeline_detector() { return split_detector<Part>(kName, Category::kDataPipeline, collect, finish); }

}  // namespace stepscope::diagnose
