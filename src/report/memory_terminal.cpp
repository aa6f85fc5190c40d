#include "report/memory_terminal.h"

#include <fmt/format.h>

#include "report/diagnosis_terminal.h"
#include "report/printable_text.h"
#include "report/text_table.h"

namespace stepscope::report {
namespace {

using trace::snapshot::kNoTime;

// Times from the first recorded event, in ms ("" when the file has none).
std::string when(const memory::MemoryReport& rep, size_t event, int64_t time_us) {
  if (event == SIZE_MAX) return "the start of the history";
  std::string s = fmt::format("event {}", fmt_count(static_cast<int64_t>(event)));
  if (time_us != kNoTime && rep.first_time_us != kNoTime)
    s += fmt::format(" (t = +{} ms)", fmt_ms(static_cast<double>(time_us - rep.first_time_us)));
  return s;
}

std::string sites_table(const std::vector<memory::SiteText>& sites, size_t top) {
  if (sites.empty()) return "    (nothing live)\n";
  TextTable t;
  t.add_column("live");
  t.add_column("blocks");
  t.add_column("allocated at", TextTable::Align::kLeft);
  for (size_t i = 0; i < sites.size() && i < top; ++i)
    t.add_row({fmt_bytes(static_cast<double>(sites[i].bytes)), fmt_count(static_cast<int64_t>(sites[i].blocks)),
               printable_text(sites[i].site)});
  return t.render(4);
}

std::string free_line(const memory::MemoryState& s) {
  return fmt::format("allocated {}, reserved {}, free inside segments {} ({} segments, {} empty), largest free "
                     "block {}, fragmentation {:.2f}",
                     fmt_bytes(static_cast<double>(s.levels.allocated)), fmt_bytes(static_cast<double>(s.levels.reserved)),
                     fmt_bytes(static_cast<double>(s.free.free_bytes)), s.free.segments, s.free.empty_segments,
                     fmt_bytes(static_cast<double>(s.free.largest_free)), s.free.fragmentation());
}

}  // namespace

std::string render_memory_terminal(const memory::MemoryReport& rep, size_t top_sites,
                                   const std::vector<diagnose::Finding>& findings) {
  std::string out = fmt::format("stepscope memory: {} (pickle protocol {}, {})\n", printable_text(rep.file),
                                rep.pickle_protocol, fmt_bytes(static_cast<double>(rep.file_bytes)));
  const trace::snapshot::AllocatorSettings& a = rep.settings;
  if (a.present)
    out += fmt::format("allocator: expandable_segments {}{}{}\n",
                       a.expandable_segments < 0 ? "not given" : a.expandable_segments ? "on" : "off",
                       a.max_split_size > 0 ? fmt::format(", max_split_size {}", fmt_bytes(static_cast<double>(a.max_split_size))) : "",
                       a.conf.empty() ? "" : fmt::format(" (PYTORCH_CUDA_ALLOC_CONF={})", printable_text(a.conf)));
  else
    out += "allocator: settings not in the file (PyTorch before 2.4)\n";
  for (const memory::DeviceReport& d : rep.devices) {
    const memory::DeviceTimeline& t = d.timeline;
    out += fmt::format("\ndevice {}: {} events recorded\n", t.device, fmt_count(static_cast<int64_t>(t.events)));
    if (!t.inconsistency.empty()) out += "  warning: " + t.inconsistency + "\n";
    out += fmt::format("  peak allocated {} at {}\n", fmt_bytes(static_cast<double>(t.peak.allocated)),
                       when(rep, t.peak_allocated_event, t.peak_allocated_event == SIZE_MAX ? kNoTime : d.at_peak.state.time_us));
    out += fmt::format("  peak reserved  {} at {}\n", fmt_bytes(static_cast<double>(t.peak.reserved)),
                       t.peak_reserved_event == SIZE_MAX ? std::string("the start of the history")
                                                         : fmt::format("event {}", fmt_count(static_cast<int64_t>(t.peak_reserved_event))));
    out += fmt::format("  churn: {} cudaMalloc (segment_alloc), {} cudaFree (segment_free), {} allocs, {} frees, {} OOMs\n",
                       fmt_count(static_cast<int64_t>(t.segment_allocs)), fmt_count(static_cast<int64_t>(t.segment_frees)),
                       fmt_count(static_cast<int64_t>(t.allocs)), fmt_count(static_cast<int64_t>(t.frees)),
                       fmt_count(static_cast<int64_t>(t.ooms)));
    out += "  at the snapshot: " + free_line(d.at_end.state) + "\n";
    out += "  at the peak of allocated memory: " + free_line(d.at_peak.state) + "\n";
    out += sites_table(d.at_peak.sites, top_sites);
    if (d.joined) {
      const memory::TraceJoin& j = d.join;
      out += fmt::format("\n  joined with {}: {}\n", printable_text(rep.trace_file), j.note);
      out += fmt::format("  {} events inside the trace ({} in steps), {} outside it\n",
                         fmt_count(static_cast<int64_t>(j.in_trace)), fmt_count(static_cast<int64_t>(j.in_steps)),
                         fmt_count(static_cast<int64_t>(j.outside)));
      if (!j.steps.empty()) {
        TextTable t;
        for (const char* h : {"step", "allocs", "allocated", "frees", "cudaMalloc", "cudaFree", "OOMs"}) t.add_column(h);
        for (const memory::StepAllocations& st : j.steps)
          t.add_row({fmt_count(st.step), fmt_count(static_cast<int64_t>(st.allocs)),
                     fmt_bytes(static_cast<double>(st.alloc_bytes)), fmt_count(static_cast<int64_t>(st.frees)),
                     fmt_count(static_cast<int64_t>(st.segment_allocs)),
                     fmt_count(static_cast<int64_t>(st.segment_frees)), fmt_count(static_cast<int64_t>(st.ooms))});
        out += t.render(4);
      }
      if (!j.ops.empty()) {
        TextTable t;
        t.add_column("allocated");
        t.add_column("allocs");
        t.add_column("in op", TextTable::Align::kLeft);
        for (size_t i = 0; i < j.ops.size() && i < top_sites; ++i)
          t.add_row({fmt_bytes(static_cast<double>(j.ops[i].alloc_bytes)),
                     fmt_count(static_cast<int64_t>(j.ops[i].allocs)), printable_text(j.ops[i].op)});
        out += t.render(4);
      }
    }
    for (const memory::OomReport& o : d.ooms) {
      out += fmt::format("\n  OOM at {}: {}\n", when(rep, o.event, o.time_us), o.explanation);
      out += "    live just before, by allocation site:\n";
      out += sites_table(o.before.sites, top_sites);
      if (!o.before.freed_before.empty()) {
        out += "    freed just before:\n";
        for (const memory::FreedText& f : o.before.freed_before)
          out += fmt::format("      {} at {}, allocated at {}\n", fmt_bytes(static_cast<double>(f.bytes)),
                             when(rep, f.event, f.time_us), printable_text(f.site));
      }
    }
  }
  if (!findings.empty()) out += "\nFindings\n";
  for (size_t i = 0; i < findings.size(); ++i) out += finding_text(findings[i], i + 1, 1);
  for (const auto& w : rep.warnings)
    out += fmt::format("\nwarning: {} x{} (first at offset {})", w.what, w.count, w.first_offset);
  if (!rep.warnings.empty()) out += "\n";
  return out;
}

}  // namespace stepscope::report
