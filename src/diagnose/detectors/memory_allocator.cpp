// memory_allocator: PyTorch's caching allocator should stop calling the
// driver once the first steps have filled its cache. cudaMalloc/cudaFree in
// later steps (torch.cuda.empty_cache() in the loop, caching disabled,
// allocation retries near capacity) cost host time, and cudaFree also waits
// for the whole device. The cost is the allocator bucket: GPU idle during
// those calls plus gaps a cudaFree's implicit sync opened. The first
// profiled step is left out as possible warm-up. A rank without
// ProfilerStep#N markers is not judged: its one window is whatever the
// profiler recorded, often from the program's start, where the first
// runtime calls create the CUDA context (CUDA C++ Programming Guide,
// "Initialization") and the caching allocator fills its cache; that
// warm-up cannot be told from steady state there.
#include <fmt/core.h>

#include <map>

#include "diagnose/detector_support.h"
#include "diagnose/detectors/detectors.h"
#include "diagnose/part_json.h"
#include "diagnose/host_delay.h"
#include "analysis/saturating.h"

namespace stepscope::diagnose {

using analysis::add_into;
namespace {

constexpr const char* kName = "memory_allocator";

// What the finding needs of one rank, and of several merged.
struct Part : FindingPart {
  int64_t calls = 0, host_ns = 0, idle_ns = 0, steady_steps = 0, reserved_drops = 0, released_bytes = 0;
  int64_t alloc_samples = 0, lead_lost_ns = 0, later_idle_ns = 0;
  bool unjudged_window = false;  // a rank without ProfilerStep#N markers made allocator calls
  std::map<std::string, int64_t> count_by_call;

  void merge(const Part& o) {
    merge_common(o);
    for (auto [to, from] : {std::pair{&calls, o.calls}, {&host_ns, o.host_ns}, {&idle_ns, o.idle_ns},
                            {&steady_steps, o.steady_steps}, {&reserved_drops, o.reserved_drops},
                            {&released_bytes, o.released_bytes}, {&alloc_samples, o.alloc_samples},
                            {&lead_lost_ns, o.lead_lost_ns}, {&later_idle_ns, o.later_idle_ns}})
      add_into(*to, from);
    unjudged_window = unjudged_window || o.unjudged_window;
    add_counts(count_by_call, o.count_by_call);
  }
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Part, saving, examples, replay, calls, host_ns, idle_ns, steady_steps, reserved_drops,
                                   released_bytes, alloc_samples, lead_lost_ns, later_idle_ns, unjudged_window,
                                   count_by_call)

Part collect(const RankContext& rc) {
  const RankView& r = *rc.view;
  const RankAttribution& a = *r.attribution;
  Part out;
  std::vector<int64_t> saving(a.steps.size(), 0);
  if (!a.from_profiler_steps) {
    out.unjudged_window = !r.host->allocator.empty();
    out.saving = RankSaving::of(r, saving, 1);  // none, but the rank still takes part in the choice
    return out;
  }
  const size_t first = a.steps.size() > 1 ? 1 : 0;  // steady state: from the second step on
  out.steady_steps = static_cast<int64_t>(a.steps.size() - first);
  std::map<uint32_t, int64_t> idle_by_call;
  for (const BucketSpan& s : a.spans) {
    if (s.bucket != Bucket::kAllocator) continue;
    add_into(saving[s.step_index], s.end_ns - s.start_ns);
    add_into(idle_by_call[s.cause_row], s.end_ns - s.start_ns);
    if (s.step_index >= first) add_into(out.idle_ns, s.end_ns - s.start_ns);
  }
  std::vector<HostDelay> delays;
  // The remedy on this rank: the steady-state steps call the driver no
  // more (their allocator calls' host time goes, a synchronising free no
  // longer waits).
  RankRemedy fix{r.store->rank, {}};
  for (const HostCall& c : r.host->allocator.calls()) {
    int32_t si = step_index_at(a, c.start_ns);
    if (si < static_cast<int32_t>(first)) continue;
    fix.remedy.host_removed.push_back({c.start_ns, c.end_ns});
    fix.remedy.unblock_rows.push_back(c.row);
    ++out.calls;
    add_into(out.host_ns, c.end_ns - c.start_ns);
    const int64_t lead = gpu_busy_within(a, c.start_ns, c.end_ns);
    add_into(out.lead_lost_ns, lead);
    delays.push_back({c.start_ns, static_cast<uint32_t>(si), lead});
    std::string name(r.store->name_of(c.row));
    ++out.count_by_call[name];
    int64_t idle = idle_by_call.count(c.row) ? idle_by_call[c.row] : 0;
    out.examples.add(static_cast<double>(idle) + 1e-3 * static_cast<double>(c.end_ns - c.start_ns),
                     example_of_row(r, c.row,
                                    fmt::format("{} on the host; GPU idle {} because of it",
                                                human_time(static_cast<double>(c.end_ns - c.start_ns)),
                                                human_time(static_cast<double>(idle)))));
  }
  out.later_idle_ns = claim_idle_after(rc, std::move(delays), saving, out.claims);
  if (!fix.remedy.empty()) out.remedies.push_back(std::move(fix));
  // The cache shrinking (Total Reserved falling) means blocks went back to
  // the driver: empty_cache() or a retry after a failed allocation.
  const trace::StringId reserved_key = r.store->strings.find("Total Reserved");
  const trace::StringId bytes_key = r.store->strings.find("Bytes");
  int64_t prev = -1;
  for (uint32_t row = 0; row < r.store->events.size(); ++row) {
    if (r.store->events.kind[row] != trace::EventKind::kMemory) continue;
    int32_t si = step_index_at(a, r.store->events.ts_ns[row]);
    auto reserved = r.store->arg_int(row, reserved_key);
    if (!reserved) continue;
    if (si >= static_cast<int32_t>(first)) {
      if (prev >= 0 && *reserved < prev) {
        ++out.reserved_drops;
        add_into(out.released_bytes, prev - *reserved);
      }
      if (r.store->arg_int(row, bytes_key).value_or(0) > 0) ++out.alloc_samples;
    }
    prev = *reserved;
  }
  out.saving = RankSaving::of(r, saving, 1);
  out.examples.trim();
  return out;
}

DetectorOutput finish(const Part& p, const JobContext&) {
  DetectorOutput out;
  if (p.unjudged_window)
    out.not_assessed.push_back({kName, "allocator calls in steady-state steps",
                                "no ProfilerStep#N markers: the one window may hold the run's warm-up (CUDA context "
                                "creation, the caching allocator filling its cache), which cannot be told from steady "
                                "state (call prof.step() every iteration)"});
  if (p.calls == 0 || analysis::saturating_add(p.idle_ns, p.later_idle_ns) <= 0) return out;

  Finding f;
  f.category = Category::kMemoryAllocator;
  f.detector = kName;
  f.confidence = Confidence::kHigh;
  p.fill(f);
  double steps = static_cast<double>(std::max<int64_t>(1, p.steady_steps));
  auto count_of = [&](const char* name) {
    auto it = p.count_by_call.find(name);
    return it == p.count_by_call.end() ? int64_t{0} : it->second;
  };
  int64_t mallocs = count_of("cudaMalloc") + count_of("cuMemAlloc_v2") + count_of("hipMalloc") + count_of("cuMemCreate");
  f.title = fmt::format("{:.0f} allocator calls to the driver per steady-state step leave the GPU idle {} per step "
                        "({:.0f}%)",
                        static_cast<double>(p.calls) / steps, human_time(f.estimated_saving_us * 1e3),
                        f.estimated_saving_pct);
  auto& m = f.evidence.metrics;
  m.push_back({"allocator_calls_per_step", static_cast<double>(p.calls) / steps, "count"});
  for (const auto& [name, n] : p.count_by_call)
    m.push_back({metric_key(name) + "_per_step", static_cast<double>(n) / steps, "count"});
  m.push_back({"allocator_host_us_per_step", static_cast<double>(p.host_ns) / steps / 1e3, "us"});
  m.push_back({"gpu_idle_in_allocator_us_per_step", static_cast<double>(p.idle_ns) / steps / 1e3, "us"});
  m.push_back({"host_time_while_gpu_busy_us_per_step", static_cast<double>(p.lead_lost_ns) / steps / 1e3, "us"});
  m.push_back({"later_host_idle_claimed_us_per_step", static_cast<double>(p.later_idle_ns) / steps / 1e3, "us"});
  m.push_back({"reserved_memory_drops_per_step", static_cast<double>(p.reserved_drops) / steps, "count"});
  m.push_back({"reserved_bytes_released_per_step", static_cast<double>(p.released_bytes) / steps, "B"});
  std::string remedy;
  // Caching off: nearly every tensor allocation reaches the driver.
  if (p.alloc_samples > 0 && mallocs * 2 >= p.alloc_samples)
    remedy = "Nearly every tensor allocation calls cudaMalloc: the caching allocator looks disabled; unset "
             "PYTORCH_NO_CUDA_MEMORY_CACHING";
  else if (p.reserved_drops > 0)
    remedy = "The cache is emptied inside the loop (reserved memory falls every step): remove "
             "torch.cuda.empty_cache() (and gc-triggered empty_cache) from the training step";
  else
    remedy = "Keep allocations out of steady-state steps: remove torch.cuda.empty_cache() from the loop and avoid "
             "changing tensor sizes every step";
  remedy += "; if the frees are retries near full memory, set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True and "
            "lower peak memory (activation checkpointing, smaller micro-batch).";
  f.remedy = remedy;
  out.findings.push_back(std::move(f));
  return out;
}

}  // namespace

Detector memory_allocator_detector() {
  return split_detector<Part>(kName, Category::kMemoryAllocator, collect, finish);
}

}  // namespace stepscope::diagnose
