#include "diagnose/snapshot_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "analysis/saturating.h"

namespace stepscope::diagnose {
namespace {

using memory::DeviceReport;
using memory::OomCause;
using memory::OomReport;

constexpr const char* kDetector = "memory_snapshot";

std::string mib(uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }
// GiB from 1 GiB up, else MiB.
std::string size_text(uint64_t bytes) {
  return bytes >= (1ull << 30) ? fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1ull << 30)) : mib(bytes);
}
std::string errors(size_t n) { return n == 1 ? "error" : "errors"; }

double bytes(uint64_t b) { return static_cast<double>(b); }

// A remedy with the effect the snapshot predicts for it; listed largest first.
struct RankedRemedy {
  // Bytes or requests made to fit; 0: not predictable from a snapshot; -1:
  // predicted to help with none of them (listed last).
  double predicted = 0;
  std::string text;
};

std::string join_ranked(std::vector<RankedRemedy> r) {
  std::stable_sort(r.begin(), r.end(), [](const auto& a, const auto& b) { return a.predicted > b.predicted; });
  std::string out;
  for (size_t i = 0; i < r.size(); ++i) out += fmt::format("{}({}) {}", i ? "; " : "", i + 1, r[i].text);
  return out + ".";
}

// The pool remedy for the site whose large requests vary most in size.
void add_pool_remedy(const DeviceReport& d, std::vector<RankedRemedy>& out) {
  const memory::VariableSizeSite& v = d.variable_site;
  if (v.distinct_sizes < 2) return;
  out.push_back({0, fmt::format("give the allocations of {} ({} sizes from {} to {} in {} requests) a pool of their "
                                "own (stepscope.memory_pool.DedicatedPool), so their blocks stop splitting the "
                                "shared segments",
                                v.site, v.distinct_sizes, mib(v.min_bytes), mib(v.max_bytes), v.allocs)});
}

// A snapshot time on the joined trace's clock (relative to its base time).
int64_t on_trace_clock(int64_t time_us, const DeviceReport& d, const SnapshotFindingsContext& ctx) {
  return analysis::saturating_add(memory::snapshot_time_on_trace(time_us, d.join.offset_ns),
                                  analysis::saturating_negate(ctx.trace_base_time_ns));
}

Example oom_example(const OomReport& o, const DeviceReport& d, const SnapshotFindingsContext& ctx) {
  Example ex;
  ex.rank = ctx.rank;
  ex.name = fmt::format("OOM ({})", memory::oom_cause_name(o.cause));
  ex.detail = o.explanation;
  ex.timed = d.joined && d.join.aligned_by_allocations && o.time_us != trace::snapshot::kNoTime;
  if (ex.timed) ex.ts_ns = on_trace_clock(o.time_us, d, ctx);
  return ex;
}

void add_oom_metrics(Finding& f, const OomReport& o, const DeviceReport& d) {
  auto& m = f.evidence.metrics;
  m.push_back({"out_of_memory_events", bytes(d.timeline.ooms), "count"});
  m.push_back({"oom_requested_bytes", bytes(o.requested), "B"});
  m.push_back({"oom_free_in_segments_bytes", bytes(o.before.state.free.free_bytes), "B"});
  m.push_back({"oom_device_free_bytes", bytes(o.device_free), "B"});
  m.push_back({"oom_process_limit", o.process_limit ? 1.0 : 0.0, "flag"});
  m.push_back({"oom_largest_free_block_bytes", bytes(o.largest_free_in_pool), "B"});
  m.push_back({"oom_fragmentation", o.before.state.free.fragmentation(), "ratio"});
  m.push_back({"oom_reserved_bytes", bytes(o.before.state.levels.reserved), "B"});
  m.push_back({"oom_allocated_bytes", bytes(o.before.state.levels.allocated), "B"});
}

Finding base_finding(const SnapshotFindingsContext& ctx, Severity severity) {
  Finding f;
  f.category = Category::kMemoryCapacity;
  f.detector = kDetector;
  f.saves_time = false;
  f.saving_rank = ctx.rank;
  f.severity = severity;
  f.confidence = Confidence::kHigh;
  return f;
}

void fragmentation_ooms(const DeviceReport& d, int expandable, const SnapshotFindingsContext& ctx,
                        std::vector<Finding>& out) {
  std::vector<const OomReport*> frag;
  for (const OomReport& o : d.ooms)
    if (o.cause == OomCause::kFragmentation) frag.push_back(&o);
  if (frag.empty()) return;
  const OomReport& first = *frag.front();
  Finding f = base_finding(ctx, Severity::kHigh);
  f.title = fmt::format("{} of {} out-of-memory {} on device {} {} fragmentation: {} requested with {} free, "
                        "the largest free block {}",
                        frag.size(), d.timeline.ooms, errors(d.timeline.ooms), d.timeline.device,
                        frag.size() == 1 ? "was" : "were", mib(first.requested),
                        mib(first.free_in_reach), mib(first.largest_free_in_pool));
  add_oom_metrics(f, first, d);
  size_t fits = 0;
  for (const OomReport* o : frag) fits += o->fits_with_expandable ? 1 : 0;
  f.evidence.metrics.push_back({"fragmentation_ooms", bytes(frag.size()), "count"});
  f.evidence.metrics.push_back({"expandable_segments", static_cast<double>(expandable), "flag"});
  std::vector<RankedRemedy> remedies;
  if (expandable != 1) {
    f.evidence.metrics.push_back({"fragmentation_ooms_served_by_expandable_segments", bytes(fits), "count"});
    // Listed after the pool when it would have served none.
    remedies.push_back(
        {fits > 0 ? static_cast<double>(fits) : -1.0,
         fmt::format("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: it would have served {} of these {} requests "
                     "(the free whole {} pages{} {} them)",
                     fits, frag.size(), first.requested > memory::kSmallRequest ? "20 MiB" : "2 MiB",
                     first.process_limit ? ", within the process's limit," : " and CUDA's free memory",
                     fits > 0 ? "cover" : "do not cover")});
  }
  add_pool_remedy(d, remedies);
  f.remedy = join_ranked(std::move(remedies));
  for (const OomReport* o : frag)
    if (f.evidence.examples.size() < kMaxExamples) f.evidence.examples.push_back(oom_example(*o, d, ctx));
  out.push_back(std::move(f));
}

void capacity_ooms(const DeviceReport& d, const SnapshotFindingsContext& ctx, std::vector<Finding>& out) {
  std::vector<const OomReport*> cap;
  for (const OomReport& o : d.ooms)
    if (o.cause == OomCause::kCapacity) cap.push_back(&o);
  if (cap.empty()) return;
  const OomReport& first = *cap.front();
  Finding f = base_finding(ctx, Severity::kHigh);
  f.title = fmt::format("{} out-of-memory {} on device {} for lack of memory: {} requested, {} free anywhere, {} "
                        "held by tensors",
                        cap.size(), errors(cap.size()), d.timeline.device, mib(first.requested),
                        mib(first.free_in_reach),
                        size_text(first.before.state.levels.allocated));
  add_oom_metrics(f, first, d);
  f.evidence.metrics.push_back({"capacity_ooms", bytes(cap.size()), "count"});
  std::string top = first.before.sites.empty()
                        ? ""
                        : fmt::format(" The largest live site then: {} ({}).", first.before.sites.front().site,
                                      size_text(first.before.sites.front().bytes));
  f.remedy = "Lower peak memory: activation checkpointing (torch.utils.checkpoint), a smaller micro-batch with "
             "gradient accumulation, bf16 parameters and optimizer states, or sharding (FSDP / ZeRO)." +
             top;
  for (const OomReport* o : cap)
    if (f.evidence.examples.size() < kMaxExamples) f.evidence.examples.push_back(oom_example(*o, d, ctx));
  out.push_back(std::move(f));
}

// No OOM, but at the peak the largest request of the history fits no cached
// block although the free bytes inside segments are a large share of reserved.
void fragmentation_risk(const DeviceReport& d, int expandable, uint64_t device_bytes,
                        const SnapshotFindingsContext& ctx, std::vector<Finding>& out) {
  const memory::MemoryState& st = d.at_peak.state;
  const uint64_t reserved = st.levels.reserved, request = d.largest_request;
  if (reserved == 0 || request == 0) return;
  const memory::FreeSpace& fr = st.free;
  const uint64_t largest = request > memory::kSmallRequest ? fr.largest_free_large : fr.largest_free_small;
  const double slack_pct = 100.0 * bytes(fr.free_bytes) / bytes(reserved);
  if (slack_pct < kSnapshotSlackPct || largest >= request) return;
  // With the device's size: the request would fail when what is left on the
  // device is too small too, though the free bytes inside segments cover it.
  const uint64_t peak_reserved = std::max(reserved, d.timeline.peak.reserved);
  const uint64_t headroom = device_bytes > peak_reserved ? device_bytes - peak_reserved : 0;
  const bool would_oom = device_bytes > 0 && headroom < request && fr.free_bytes + headroom >= request;
  Finding f = base_finding(ctx, would_oom ? Severity::kMedium : Severity::kLow);
  f.confidence = device_bytes > 0 ? Confidence::kHigh : Confidence::kMedium;
  f.title = fmt::format("Fragmented cache on device {} at the peak: {} free inside segments ({:.0f}% of reserved) but "
                        "the largest free block, {}, is smaller than the largest request, {}{}",
                        d.timeline.device, size_text(fr.free_bytes), slack_pct, mib(largest), mib(request),
                        would_oom ? fmt::format("; only {} left on the device", mib(headroom)) : "");
  auto& m = f.evidence.metrics;
  m.push_back({"peak_reserved_bytes", bytes(peak_reserved), "B"});
  m.push_back({"peak_allocated_bytes", bytes(d.timeline.peak.allocated), "B"});
  m.push_back({"free_in_segments_at_peak_bytes", bytes(fr.free_bytes), "B"});
  m.push_back({"largest_free_block_at_peak_bytes", bytes(largest), "B"});
  m.push_back({"fragmentation_at_peak", fr.fragmentation(), "ratio"});
  m.push_back({"largest_request_bytes", bytes(request), "B"});
  m.push_back({"expandable_segments", static_cast<double>(expandable), "flag"});
  if (device_bytes > 0) {
    m.push_back({"device_memory_bytes", bytes(device_bytes), "B"});
    m.push_back({"headroom_bytes", bytes(headroom), "B"});
  }
  std::vector<RankedRemedy> remedies;
  if (expandable != 1) {
    m.push_back({"free_in_whole_pages_at_peak_bytes", bytes(fr.free_in_pages), "B"});
    remedies.push_back({bytes(fr.free_in_pages),
                        fmt::format("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: {} of the free bytes lie in "
                                    "whole pages it could unmap and map again where a request needs them",
                                    size_text(fr.free_in_pages))});
  }
  add_pool_remedy(d, remedies);
  if (device_bytes > 0 && !would_oom)
    remedies.push_back({0, fmt::format("the device still has {} above the peak reserved: room for a larger batch "
                                       "before fragmentation matters",
                                       size_text(headroom))});
  f.remedy = join_ranked(std::move(remedies));
  Example peak;
  peak.rank = ctx.rank;
  peak.name = "peak allocated";
  peak.detail = fmt::format("{} allocated, {} reserved, {} segments", size_text(st.levels.allocated), size_text(reserved),
                            fr.segments);
  peak.timed = d.joined && d.join.aligned_by_allocations && st.time_us != trace::snapshot::kNoTime;
  if (peak.timed) peak.ts_ns = on_trace_clock(st.time_us, d, ctx);
  f.evidence.examples.push_back(peak);
  out.push_back(std::move(f));
}

}  // namespace

std::vector<Finding> snapshot_findings(const memory::MemoryReport& report, const SnapshotFindingsContext& ctx) {
  std::vector<Finding> out;
  for (const DeviceReport& d : report.devices) {
    fragmentation_ooms(d, report.expandable_segments, ctx, out);
    capacity_ooms(d, ctx, out);
    const size_t dev = static_cast<size_t>(std::max(d.timeline.device, 0));
    const uint64_t device_bytes = dev < ctx.device_bytes.size() ? ctx.device_bytes[dev] : 0;
    if (d.timeline.ooms == 0) fragmentation_risk(d, report.expandable_segments, device_bytes, ctx, out);
  }
  return out;
}

}  // namespace stepscope::diagnose
