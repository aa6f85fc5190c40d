#include "memory/snapshot_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace stepscope::memory {

using trace::snapshot::MemorySnapshot;
using trace::snapshot::TraceAction;

std::string_view oom_cause_name(OomCause c) {
  switch (c) {
    case OomCause::kFragmentation: return "fragmentation";
    case OomCause::kCapacity: return "capacity";
    case OomCause::kOther: return "other";
  }
  return "other";
}

namespace {


std::string frame_text(const MemorySnapshot& s, uint32_t f) {
  return fmt::format("{}:{} {}", s.strings.get(s.frames.filename[f]), s.frames.line[f], s.strings.get(s.frames.name[f]));
}

std::string stack_text(const MemorySnapshot& s, uint32_t stack) {
  std::string out;
  for (uint32_t i = s.stacks.offsets[stack]; i < s.stacks.offsets[stack + 1]; ++i) {
    if (!out.empty()) out += " < ";
    out += frame_text(s, s.stacks.frames[i]);
  }
  return out;
}

std::string site_text(const MemorySnapshot& s, uint32_t frame) {
  return frame == UINT32_MAX ? "(no stack recorded)" : frame_text(s, frame);
}

StateReport describe(const MemorySnapshot& s, MemoryState st) {
  StateReport r;
  for (const AllocationSite& site : st.sites)
    r.sites.push_back({site_text(s, site.frame), stack_text(s, site.stack), site.bytes, site.blocks});
  for (size_t i = 0; i < st.freed_before.size(); ++i) {
    const size_t e = st.freed_before[i];
    // Where the block was allocated; a block older than the history only
    // has the stack that freed it.
    const uint32_t stack = st.freed_alloc_stack[i] != 0 ? st.freed_alloc_stack[i] : s.trace.stack[e];
    r.freed_before.push_back({e, s.trace.time_us[e], s.trace.size[e], site_text(s, allocation_site(s, stack))});
  }
  r.state = std::move(st);
  return r;
}

std::string mib(uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

OomReport explain_oom(const MemorySnapshot& s, size_t e, MemoryState before) {
  OomReport o;
  o.event = e;
  o.time_us = s.trace.time_us[e];
  o.requested = s.trace.size[e];
  o.device_free = s.trace.device_free[e];
  const FreeSpace& f = before.free;
  o.largest_free_in_pool = o.requested > kSmallRequest ? f.largest_free_large : f.largest_free_small;
  // With free device memory for the segment c10 would have asked cudaMalloc
  // for, cudaMalloc would have served it: the allocator's own limit refused
  // the request (set_per_process_memory_fraction).
  o.process_limit = o.device_free >= segment_for_request(o.requested);
  const uint64_t device_in_reach = o.process_limit ? 0 : o.device_free;
  const uint64_t free_total = f.free_bytes + device_in_reach;
  o.free_in_reach = free_total;
  // Under expandable segments an OOM first unmaps every free whole page
  // (release_cached_blocks) and then maps the request's pages: it fits when
  // those pages and what CUDA had free cover the request in whole pages.
  const uint64_t page = o.requested > kSmallRequest ? kExpandablePageLarge : kExpandablePageSmall;
  o.fits_with_expandable = (o.requested + page - 1) / page * page <= f.free_in_pages + device_in_reach;
  o.reachable = before.levels.reserved + device_in_reach;
  // Where the device's free memory was out of reach, the sentence says so.
  const std::string device_part =
      o.process_limit ? fmt::format(" (the device still had {} free: a per-process limit such as "
                                    "torch.cuda.set_per_process_memory_fraction held the cache to about {} reserved)",
                                    mib(o.device_free), mib(before.levels.reserved))
                      : "";
  if (o.largest_free_in_pool >= o.requested) {
    o.cause = OomCause::kOther;
    o.explanation = fmt::format(
        "{} requested while a cached free block of {} existed: it belongs to another stream or is still in use by "
        "one, so the allocator could not hand it out",
        mib(o.requested), mib(o.largest_free_in_pool));
  } else if (free_total >= o.requested) {
    o.cause = OomCause::kFragmentation;
    o.explanation =
        o.process_limit
            ? fmt::format("fragmentation: {} requested; {} were free inside {} segments, but the largest free block "
                          "was {}{}",
                          mib(o.requested), mib(f.free_bytes), f.segments, mib(o.largest_free_in_pool), device_part)
            : fmt::format("fragmentation: {} requested; {} were free in total ({} cached inside {} segments + {} on "
                          "the device), but the largest free block was {}",
                          mib(o.requested), mib(free_total), mib(f.free_bytes), f.segments, mib(o.device_free),
                          mib(o.largest_free_in_pool));
  } else {
    o.cause = OomCause::kCapacity;
    o.explanation =
        o.process_limit
            ? fmt::format("capacity: {} requested; only {} were free inside segments, {} held by tensors{}",
                          mib(o.requested), mib(f.free_bytes), mib(before.levels.allocated), device_part)
            : fmt::format("capacity: {} requested; only {} were free anywhere ({} cached inside segments + {} on the "
                          "device), {} held by tensors",
                          mib(o.requested), mib(free_total), mib(f.free_bytes), mib(o.device_free),
                          mib(before.levels.allocated));
  }
  o.before = describe(s, std::move(before));
  return o;
}

VariableSizeSite variable_size_site(const MemorySnapshot& s, const DeviceTimeline& t,
                                    const std::vector<uint32_t>& site_of_stack) {
  struct Sizes {
    std::set<uint64_t> sizes;
    uint64_t allocs = 0;
  };
  std::map<uint32_t, Sizes> by_site;
  for (size_t e = t.first_event; e < t.first_event + t.events; ++e) {
    if (s.trace.action[e] != TraceAction::kAlloc || s.trace.size[e] <= kSmallRequest) continue;
    Sizes& z = by_site[site_of_stack[s.trace.stack[e]]];
    z.sizes.insert(s.trace.size[e]);
    ++z.allocs;
  }
  VariableSizeSite best;
  for (const auto& [frame, z] : by_site) {
    if (z.sizes.size() <= best.distinct_sizes) continue;
    best = {site_text(s, frame), z.sizes.size(), z.allocs, *z.sizes.begin(), *z.sizes.rbegin()};
  }
  return best;
}

}  // namespace

MemoryReport build_memory_report(const MemorySnapshot& s, const std::string& file, size_t top_sites,
                                 size_t max_ooms, const trace::EventStore* trace, const std::string& trace_file) {
  MemoryReport rep;
  rep.file = file;
  rep.pickle_protocol = s.pickle_protocol;
  rep.file_bytes = s.file_bytes;
  rep.settings = s.settings;
  rep.expandable_segments = s.settings.expandable_segments;
  for (uint8_t e : s.segments.is_expandable)
    if (e) rep.expandable_segments = 1;
  rep.warnings = s.warnings;
  rep.trace_file = trace ? trace_file : "";
  for (int64_t t : s.trace.time_us)
    if (t != trace::snapshot::kNoTime && (rep.first_time_us == trace::snapshot::kNoTime || t < rep.first_time_us))
      rep.first_time_us = t;
  const std::vector<uint32_t> site_of_stack = allocation_sites(s);
  for (DeviceTimeline& t : snapshot_timelines(s)) {
    DeviceReport d;
    // States after k of the device's events: at the peak of allocated memory
    // (0 when the peak is the level before the history), at the snapshot, and
    // just before each OOM.
    std::vector<size_t> asked{t.peak_allocated_event == SIZE_MAX ? 0 : t.peak_allocated_event - t.first_event + 1,
                              t.events};
    std::vector<size_t> ooms;
    for (size_t e = t.first_event; e < t.first_event + t.events && ooms.size() < max_ooms; ++e)
      if (s.trace.action[e] == TraceAction::kOom) ooms.push_back(e);
    for (size_t e : ooms) asked.push_back(e - t.first_event);
    std::vector<MemoryState> states = memory_states_after(s, t.device, asked, top_sites);
    d.at_peak = describe(s, std::move(states[0]));
    d.at_end = describe(s, std::move(states[1]));
    for (size_t i = 0; i < ooms.size(); ++i) d.ooms.push_back(explain_oom(s, ooms[i], std::move(states[2 + i])));
    if (trace) {
      d.joined = true;
      d.join = join_trace(s, t.device, *trace);
    }
    for (size_t e = t.first_event; e < t.first_event + t.events; ++e)
      if (s.trace.action[e] == TraceAction::kAlloc) d.largest_request = std::max(d.largest_request, s.trace.size[e]);
    d.variable_site = variable_size_site(s, t, site_of_stack);
    d.sites = site_timeline(s, t);
    for (uint32_t f : d.sites.sites) d.site_names.push_back(site_text(s, f));
    d.site_names.push_back("other");
    d.timeline = std::move(t);
    rep.devices.push_back(std::move(d));
  }
  return rep;
}

}  // namespace stepscope::memory
