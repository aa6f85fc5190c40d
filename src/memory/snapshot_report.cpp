#include "memory/snapshot_report.h"

#include <fmt/format.h>

#include <algorithm>

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

constexpr uint64_t kSmallRequest = 1ull << 20;  // c10 kSmallSize: up to 1 MiB goes to the small pool

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
  const uint64_t free_total = f.free_bytes + o.device_free;
  if (o.largest_free_in_pool >= o.requested) {
    o.cause = OomCause::kOther;
    o.explanation = fmt::format(
        "{} requested while a cached free block of {} existed: it belongs to another stream or is still in use by "
        "one, so the allocator could not hand it out",
        mib(o.requested), mib(o.largest_free_in_pool));
  } else if (free_total >= o.requested) {
    o.cause = OomCause::kFragmentation;
    o.explanation = fmt::format(
        "fragmentation: {} requested; {} were free in total ({} cached inside {} segments + {} on the device), but "
        "the largest free block was {}",
        mib(o.requested), mib(free_total), mib(f.free_bytes), f.segments, mib(o.device_free),
        mib(o.largest_free_in_pool));
  } else {
    o.cause = OomCause::kCapacity;
    o.explanation = fmt::format(
        "capacity: {} requested; only {} were free anywhere ({} cached inside segments + {} on the device), "
        "{} held by tensors",
        mib(o.requested), mib(free_total), mib(f.free_bytes), mib(o.device_free), mib(before.levels.allocated));
  }
  o.before = describe(s, std::move(before));
  return o;
}

}  // namespace

MemoryReport build_memory_report(const MemorySnapshot& s, const std::string& file, size_t top_sites,
                                 size_t max_ooms, const trace::EventStore* trace, const std::string& trace_file) {
  MemoryReport rep;
  rep.file = file;
  rep.pickle_protocol = s.pickle_protocol;
  rep.file_bytes = s.file_bytes;
  rep.settings = s.settings;
  rep.warnings = s.warnings;
  rep.trace_file = trace ? trace_file : "";
  for (int64_t t : s.trace.time_us)
    if (t != trace::snapshot::kNoTime && (rep.first_time_us == trace::snapshot::kNoTime || t < rep.first_time_us))
      rep.first_time_us = t;
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
    d.sites = site_timeline(s, t);
    for (uint32_t f : d.sites.sites) d.site_names.push_back(site_text(s, f));
    d.site_names.push_back("other");
    d.timeline = std::move(t);
    rep.devices.push_back(std::move(d));
  }
  return rep;
}

}  // namespace stepscope::memory
