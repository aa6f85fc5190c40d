#include "report/memory_json.h"

#include "report/diagnosis_json.h"

namespace stepscope::report {
namespace {

using nlohmann::ordered_json;
using trace::snapshot::kNoTime;

ordered_json time_or_null(int64_t t) { return t == kNoTime ? ordered_json(nullptr) : ordered_json(t); }
ordered_json event_or_null(size_t e) { return e == SIZE_MAX ? ordered_json(nullptr) : ordered_json(e); }

ordered_json levels(const memory::MemoryLevels& l) {
  return {{"allocated_bytes", l.allocated}, {"active_bytes", l.active}, {"reserved_bytes", l.reserved}};
}

ordered_json state(const memory::StateReport& r) {
  const memory::MemoryState& s = r.state;
  ordered_json j = {{"events_applied", s.applied}, {"event", event_or_null(s.event)}, {"time_us", time_or_null(s.time_us)}};
  j.update(levels(s.levels));
  j["free_bytes"] = s.free.free_bytes;
  j["largest_free_block_bytes"] = s.free.largest_free;
  j["largest_free_block_large_pool_bytes"] = s.free.largest_free_large;
  j["largest_free_block_small_pool_bytes"] = s.free.largest_free_small;
  j["segments"] = s.free.segments;
  j["empty_segments"] = s.free.empty_segments;
  j["free_in_whole_pages_bytes"] = s.free.free_in_pages;
  j["fragmentation"] = s.free.fragmentation();
  j["inconsistent_events"] = s.inconsistent_events;
  ordered_json sites = ordered_json::array();
  for (const memory::SiteText& t : r.sites)
    sites.push_back({{"site", t.site}, {"bytes", t.bytes}, {"blocks", t.blocks}, {"stack", t.stack}});
  j["live_by_site"] = std::move(sites);
  ordered_json freed = ordered_json::array();
  for (const memory::FreedText& f : r.freed_before)
    freed.push_back({{"event", f.event}, {"time_us", time_or_null(f.time_us)}, {"bytes", f.bytes}, {"site", f.site}});
  j["freed_before"] = std::move(freed);
  return j;
}

}  // namespace

ordered_json build_memory_json(const memory::MemoryReport& rep, const std::vector<diagnose::Finding>& findings) {
  ordered_json j;
  j["schema_version"] = kMemoryJsonSchemaVersion;
  j["file"] = rep.file;
  j["pickle_protocol"] = rep.pickle_protocol;
  j["file_bytes"] = rep.file_bytes;
  j["first_time_us"] = time_or_null(rep.first_time_us);
  j["trace"] = rep.trace_file.empty() ? ordered_json(nullptr) : ordered_json(rep.trace_file);
  const trace::snapshot::AllocatorSettings& a = rep.settings;
  j["allocator_settings"] =
      a.present ? ordered_json{{"expandable_segments", a.expandable_segments < 0 ? ordered_json(nullptr)
                                                                                 : ordered_json(a.expandable_segments == 1)},
                               {"max_split_size_bytes", a.max_split_size < 0 ? ordered_json(nullptr) : ordered_json(a.max_split_size)},
                               {"garbage_collection_threshold",
                                a.garbage_collection_threshold < 0 ? ordered_json(nullptr)
                                                                   : ordered_json(a.garbage_collection_threshold)},
                               {"conf", a.conf}}
                : ordered_json(nullptr);
  ordered_json devices = ordered_json::array();
  for (const memory::DeviceReport& d : rep.devices) {
    const memory::DeviceTimeline& t = d.timeline;
    ordered_json dj = {{"device", t.device}, {"events", t.events}};
    dj["start"] = levels(t.start);
    dj["end"] = levels(t.end);
    dj["peak"] = levels(t.peak);
    dj["peak_allocated_event"] = event_or_null(t.peak_allocated_event);
    dj["peak_reserved_event"] = event_or_null(t.peak_reserved_event);
    dj["churn"] = {{"segment_allocs", t.segment_allocs}, {"segment_frees", t.segment_frees}, {"allocs", t.allocs},
                   {"frees", t.frees}, {"ooms", t.ooms}};
    dj["inconsistency"] = t.inconsistency.empty() ? ordered_json(nullptr) : ordered_json(t.inconsistency);
    dj["at_peak_allocated"] = state(d.at_peak);
    dj["at_snapshot"] = state(d.at_end);
    dj["largest_request_bytes"] = d.largest_request;
    const memory::VariableSizeSite& v = d.variable_site;
    dj["variable_size_site"] = v.distinct_sizes == 0 ? ordered_json(nullptr)
                                                     : ordered_json{{"site", v.site}, {"distinct_sizes", v.distinct_sizes},
                                                                    {"allocs", v.allocs}, {"min_bytes", v.min_bytes},
                                                                    {"max_bytes", v.max_bytes}};
    ordered_json ooms = ordered_json::array();
    for (const memory::OomReport& o : d.ooms) {
      ordered_json oj = {{"event", o.event},
                         {"time_us", time_or_null(o.time_us)},
                         {"requested_bytes", o.requested},
                         {"device_free_bytes", o.device_free},
                         {"process_limit", o.process_limit},
                         {"largest_free_block_in_pool_bytes", o.largest_free_in_pool},
                         {"cause", std::string(memory::oom_cause_name(o.cause))},
                         {"fits_with_expandable_segments", o.fits_with_expandable},
                         {"explanation", o.explanation}};
      oj["before"] = state(o.before);
      ooms.push_back(std::move(oj));
    }
    dj["ooms"] = std::move(ooms);
    ordered_json series = ordered_json::array();
    for (const memory::TimelinePoint& p : t.series)
      series.push_back({p.event, time_or_null(p.time_us), p.max.allocated, p.max.active, p.max.reserved});
    dj["series_columns"] = {"event", "time_us", "max_allocated_bytes", "max_active_bytes", "max_reserved_bytes"};
    dj["series"] = std::move(series);
    // Active bytes by allocation site (the largest sites, then "other").
    ordered_json bands = ordered_json::array(), peaks = ordered_json::array(), rows = ordered_json::array();
    for (const std::string& n : d.site_names) bands.push_back(n);
    for (uint64_t p : d.sites.site_peaks) peaks.push_back(p);
    for (size_t k = 0; k < d.sites.events.size(); ++k) {
      ordered_json row = {d.sites.events[k], time_or_null(d.sites.time_us[k])};
      for (uint64_t b : d.sites.bytes[k]) row.push_back(b);
      rows.push_back(std::move(row));
    }
    if (d.joined) {
      const memory::TraceJoin& tj = d.join;
      ordered_json steps = ordered_json::array(), ops = ordered_json::array();
      for (const memory::StepAllocations& st : tj.steps)
        steps.push_back({{"step", st.step}, {"allocs", st.allocs}, {"alloc_bytes", st.alloc_bytes}, {"frees", st.frees},
                         {"segment_allocs", st.segment_allocs}, {"segment_frees", st.segment_frees},
                         {"ooms", st.ooms}});
      for (const memory::OpAllocations& o : tj.ops)
        ops.push_back({{"op", o.op}, {"allocs", o.allocs}, {"alloc_bytes", o.alloc_bytes}});
      dj["trace_join"] = {{"aligned_by_allocations", tj.aligned_by_allocations}, {"offset_ns", tj.offset_ns},
                          {"votes", tj.votes}, {"matched", tj.matched}, {"note", tj.note},
                          {"events_in_trace", tj.in_trace}, {"events_outside", tj.outside},
                          {"events_in_steps", tj.in_steps}, {"steps", std::move(steps)}, {"ops", std::move(ops)}};
    } else {
      dj["trace_join"] = nullptr;
    }
    dj["site_series"] = {{"sites", std::move(bands)}, {"site_peaks_bytes", std::move(peaks)}, {"rows", std::move(rows)}};
    devices.push_back(std::move(dj));
  }
  j["devices"] = std::move(devices);
  ordered_json fj = ordered_json::array();
  for (const diagnose::Finding& f : findings) fj.push_back(finding_json(f));
  j["findings"] = std::move(fj);
  ordered_json warnings = ordered_json::array();
  for (const auto& w : rep.warnings)
    warnings.push_back({{"what", w.what}, {"count", w.count}, {"first_offset", w.first_offset}});
  j["warnings"] = std::move(warnings);
  return j;
}

}  // namespace stepscope::report
