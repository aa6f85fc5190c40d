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
// docs/kernels.md, "Image augmentation").
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
             "crop/flip/color-jitter/normalize kernel; docs/kernels.md), whose speed-up on the H200 is not "
             "measured yet";
  }
  return "";
}

bool is_htod(std::string_view name) { return name.starts_with("Memcpy HtoD"); }
bool is_pageable(std::string_view name) { return name.find("Pageable") != std::string_view::npos; }

DetectorOutput run(const DetectorContext& ctx) {
  DetectorOutput out;
  StepTimes saving = zero_step_times(ctx);
  int64_t loader_calls = 0, loader_host_ns = 0, loader_idle_ns = 0, single_process = 0;
  int64_t htod = 0, pageable = 0, pageable_bytes = 0, htod_ns = 0, exposed_htod_ns = 0;
  int64_t steps_total = 0, lead_lost_ns = 0, later_idle_ns = 0;
  std::vector<IdleClaim> claims;
  std::vector<RankRemedy> remedies;
  std::vector<WeightedExample> examples;
  const trace::StringId bytes_key_missing = trace::StringTable::kMissing;

  for (size_t ri = 0; ri < ctx.ranks.size(); ++ri) {
    const RankView& r = ctx.ranks[ri];
    const RankAttribution& a = *r.attribution;
    add_into(steps_total, static_cast<int64_t>(a.steps.size()));
    // GPU idle inside DataLoader calls, per call and per step.
    std::map<uint32_t, int64_t> idle_by_call;
    std::vector<Interval> copy_spans;
    std::vector<uint32_t> copy_step;
    for (const BucketSpan& s : a.spans) {
      if (s.bucket == Bucket::kDataPipeline) {
        add_into(saving[ri][s.step_index], s.end_ns - s.start_ns);
        add_into(idle_by_call[s.cause_row], s.end_ns - s.start_ns);
        add_into(loader_idle_ns, s.end_ns - s.start_ns);
      } else if (s.bucket == Bucket::kMemoryCopy) {
        copy_spans.push_back({s.start_ns, s.end_ns});
        copy_step.push_back(s.step_index);
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
      ++loader_calls;
      add_into(loader_host_ns, c.end_ns - c.start_ns);
      const int64_t lead = gpu_busy_within(a, c.start_ns, c.end_ns);
      add_into(lead_lost_ns, lead);
      delays.push_back({c.start_ns, static_cast<uint32_t>(si), lead});
      std::string_view name = r.store->name_of(c.row);
      if (name.find("SingleProcess") != std::string_view::npos) ++single_process;
      int64_t idle = idle_by_call.count(c.row) ? idle_by_call[c.row] : 0;
      examples.push_back({static_cast<double>(idle),
                          example_of_row(r, c.row,
                                         fmt::format("GPU idle {} of this {} call", human_time(static_cast<double>(idle)),
                                                     human_time(static_cast<double>(c.end_ns - c.start_ns))))});
    }
    add_into(later_idle_ns, claim_idle_after(ctx, ri, std::move(delays), saving[ri], claims));
    // Host-to-device copies and the part of them no kernel hides.
    IntervalSet exposed(copy_spans);
    const trace::StringId bytes_key = r.store->strings.find("bytes");
    for (const auto& act : r.timeline->activities) {
      std::string_view name = r.store->strings.get(act.name);
      if (act.kind != trace::EventKind::kMemcpy || !is_htod(name)) continue;
      int32_t si = step_index_at(a, act.start_ns);
      if (si < 0) continue;
      ++htod;
      add_into(htod_ns, act.duration_ns());
      int64_t ex = exposed.overlap(act.start_ns, act.end_ns);
      add_into(exposed_htod_ns, ex);
      add_into(saving[ri][static_cast<size_t>(si)], ex);
      int64_t bytes = 0;
      if (bytes_key != bytes_key_missing) bytes = r.store->arg_int(act.row, bytes_key).value_or(0);
      if (is_pageable(name)) {
        if (act.has_launch()) fix.remedy.host_removed.push_back({act.launch_start_ns, act.launch_end_ns});
        ++pageable;
        add_into(pageable_bytes, bytes);
      }
      if (ex > 0 || is_pageable(name))
        examples.push_back({static_cast<double>(ex),
                            example_of_row(r, act.row,
                                           fmt::format("{} B copied{}; {} of it with no kernel running", bytes,
                                                       is_pageable(name) ? " from pageable memory" : "",
                                                       human_time(static_cast<double>(ex))))});
    }
    if (!fix.remedy.empty()) remedies.push_back(std::move(fix));
  }

  // What the loader spends its time on, over all ranks.
  LoaderWorkTime work;
  for (const RankView& r : ctx.ranks) {
    const LoaderWorkTime w = loader_work_time(r);
    for (size_t k = 0; k < kLoaderWorkKinds; ++k) add_into(work.ns[k], w.ns[k]);
    add_into(work.calls_ns, w.calls_ns);
    work.saw_python_frames = work.saw_python_frames || w.saw_python_frames;
  }
  bool any_loader = loader_calls > 0;
  if (any_loader && !work.saw_python_frames)
    out.not_assessed.push_back({kName, "what the DataLoader spends its time on (images, tokenizing, parsing)",
                                "no Python frames inside its calls (profile with with_stack=True)"});
  if (!any_loader)
    out.not_assessed.push_back({kName, "GPU idle while the DataLoader runs",
                                "no DataLoader __next__ spans in the steps (the loop does not iterate a "
                                "torch.utils.data.DataLoader): time spent producing batches shows up as host_overhead"});
  const int64_t loader_ns = analysis::saturating_add(loader_idle_ns, later_idle_ns);
  const int64_t total = analysis::saturating_add(loader_ns, exposed_htod_ns);
  if (total <= 0) return out;

  Finding f;
  f.category = Category::kDataPipeline;
  f.detector = kName;
  set_saving(f, ctx, saving);
  f.claims = std::move(claims);
  f.remedies = std::move(remedies);
  double steps = static_cast<double>(std::max<int64_t>(1, steps_total));
  if (loader_ns >= exposed_htod_ns) {
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
  m.push_back({"dataloader_calls_per_step", static_cast<double>(loader_calls) / steps, "count"});
  m.push_back({"dataloader_host_us_per_step", static_cast<double>(loader_host_ns) / steps / 1e3, "us"});
  m.push_back({"gpu_idle_in_dataloader_us_per_step", static_cast<double>(loader_idle_ns) / steps / 1e3, "us"});
  m.push_back({"host_time_while_gpu_busy_us_per_step", static_cast<double>(lead_lost_ns) / steps / 1e3, "us"});
  m.push_back({"later_host_idle_claimed_us_per_step", static_cast<double>(later_idle_ns) / steps / 1e3, "us"});
  m.push_back({"htod_copies_per_step", static_cast<double>(htod) / steps, "count"});
  m.push_back({"pageable_htod_copies_per_step", static_cast<double>(pageable) / steps, "count"});
  m.push_back({"pageable_htod_bytes_per_step", static_cast<double>(pageable_bytes) / steps, "B"});
  m.push_back({"htod_copy_us_per_step", static_cast<double>(htod_ns) / steps / 1e3, "us"});
  m.push_back({"exposed_htod_copy_us_per_step", static_cast<double>(exposed_htod_ns) / steps / 1e3, "us"});
  size_t top_work = 0;
  for (size_t k = 0; k < kLoaderWorkKinds; ++k) {
    const double pct = work.calls_ns > 0 ? 100.0 * static_cast<double>(work.ns[k]) / static_cast<double>(work.calls_ns) : 0;
    m.push_back({fmt::format("dataloader_time_in_{}_pct", to_string(static_cast<LoaderWork>(k))), pct, "%"});
    if (work.ns[k] > work.ns[top_work]) top_work = k;
  }
  const bool named_work = work.calls_ns > 0 && 100.0 * static_cast<double>(work.ns[top_work]) /
                                                   static_cast<double>(work.calls_ns) >= kWorkSharePct;
  f.evidence.examples = top_examples(std::move(examples));

  std::string remedy;
  if (loader_ns > 0) {
    remedy = single_process > 0
                 ? "The DataLoader runs in the training process (num_workers=0): use DataLoader(..., num_workers=N "
                   "(4-8 per GPU), persistent_workers=True, prefetch_factor=2) so batches are built while the GPU "
                   "runs"
                 : "Give the DataLoader more workers or a larger prefetch_factor so a batch is always ready";
    remedy += named_work ? "; " + work_remedy(static_cast<LoaderWork>(top_work))
                         : "; move heavy per-sample work (tokenisation, decoding, augmentation) offline or into the "
                           "workers";
  }
  if (pageable > 0 || exposed_htod_ns > 0) {
    if (!remedy.empty()) remedy += "; ";
    remedy += "copy batches from pinned memory without blocking: DataLoader(pin_memory=True) and "
              "batch.to('cuda', non_blocking=True), ideally one step ahead on a side stream";
  }
  f.remedy = remedy + ".";
  out.findings.push_back(std::move(f));
  return out;
}

}  // namespace

Detector data_pipeline_detector() { return {kName, Category::kDataPipeline, run}; }

}  // namespace stepscope::diagnose
