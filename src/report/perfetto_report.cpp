#include "report/perfetto_report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <bit>
#include <map>
#include <set>
#include <unordered_set>

#include "report/file_sink.h"
#include "report/json_text.h"
#include "report/perfetto_layout.h"
#include "report/trace_event_writer.h"

namespace stepscope::report {

namespace {

using trace::EventStore;

// A pid or tid as the trace wrote it. The reader keeps a string id ("Spans",
// "PyTorch Profiler") as -(interned id) - 1; it goes back out as that string,
// because Perfetto reads pids and tids as unsigned and would drop a negative.
void append_id(std::string& out, const EventStore& s, int64_t id) {
  if (id < 0) {
    const uint64_t string_id = static_cast<uint64_t>(-(id + 1));
    if (string_id < s.strings.size()) {
      append_json_string(out, s.strings.get(static_cast<trace::StringId>(string_id)));
      return;
    }
  }
  append_int(out, id);
}

void append_pid(std::string& out, const EventStore& s, const RankPlacement& p, int32_t pid) {
  if (p.renumber) {
    append_int(out, p.pid(pid));
  } else {
    append_id(out, s, pid);
  }
}

bool is_instant(trace::EventKind k) { return k == trace::EventKind::kMemory || k == trace::EventKind::kInstant; }

void append_args(std::string& out, const EventStore& s, size_t i) {
  const auto& e = s.events;
  bool first = true;
  auto key = [&](std::string_view k) {
    out += first ? "" : ",";
    first = false;
    append_json_string(out, k);
    out += ':';
  };
  if (e.external_id[i] != trace::kNone) {
    key("External id");
    append_int(out, e.external_id[i]);
  }
  if (e.correlation[i] != trace::kNone) {
    key("correlation");
    append_int(out, e.correlation[i]);
  }
  if (e.device[i] != static_cast<int32_t>(trace::kNone)) {
    key("device");
    append_int(out, e.device[i]);
  }
  if (e.stream[i] != trace::kNone && !(e.flags[i] & trace::kStreamFromTid)) {
    key("stream");
    append_int(out, e.stream[i]);
  }
  const auto& a = s.args;
  const trace::EventStore::ArgRows rows = s.arg_rows(i);
  for (uint32_t k = rows.first; k < rows.last; ++k) {
    key(s.strings.get(a.key[k]));
    switch (a.type[k]) {
      case trace::ArgType::kInt: append_int(out, a.value[k]); break;
      case trace::ArgType::kDouble: append_json_number(out, std::bit_cast<double>(a.value[k])); break;
      case trace::ArgType::kString: append_json_string(out, s.strings.get(static_cast<trace::StringId>(a.value[k]))); break;
      case trace::ArgType::kJson: out += s.strings.get(static_cast<trace::StringId>(a.value[k])); break;
    }
  }
}

// One stored event: "X" (or "i" for instants) with everything the store kept.
void write_event(TraceEventWriter& w, const EventStore& s, const RankPlacement& p, size_t i) {
  const auto& e = s.events;
  std::string& out = w.begin_event();
  out += is_instant(e.kind[i]) ? "\"ph\":\"i\",\"s\":\"t\",\"cat\":" : "\"ph\":\"X\",\"cat\":";
  append_json_string(out, s.strings.get(e.category[i]));
  out += ",\"name\":";
  append_json_string(out, s.strings.get(e.name[i]));
  out += ",\"pid\":";
  append_pid(out, s, p, e.pid[i]);
  out += ",\"tid\":";
  append_id(out, s, e.tid[i]);
  out += ",\"ts\":";
  append_us_from_ns(out, e.ts_ns[i] + p.shift_ns);
  if (!is_instant(e.kind[i]) && !(e.flags[i] & trace::kNoDuration)) {
    out += ",\"dur\":";
    append_us_from_ns(out, e.dur_ns[i]);
  }
  if (e.args_count[i] > 0 || e.external_id[i] != trace::kNone || e.correlation[i] != trace::kNone ||
      e.device[i] != static_cast<int32_t>(trace::kNone) || e.stream[i] != trace::kNone) {
    out += ",\"args\":{";
    append_args(out, s, i);
    out += '}';
  }
  w.end_event();
}

void write_flow(TraceEventWriter& w, const EventStore& s, const RankPlacement& p, size_t i) {
  const auto& f = s.flows;
  std::string& out = w.begin_event();
  fmt::format_to(std::back_inserter(out), "\"ph\":\"{}\",\"id\":{},\"pid\":", f.phase[i],
                 f.id[i] * p.flow_id_stride + p.flow_id_offset);
  append_pid(out, s, p, f.pid[i]);
  out += ",\"tid\":";
  append_id(out, s, f.tid[i]);
  out += ",\"ts\":";
  append_us_from_ns(out, f.ts_ns[i] + p.shift_ns);
  out += ",\"cat\":";
  append_json_string(out, s.strings.get(f.category[i]));
  out += ",\"name\":";
  append_json_string(out, s.strings.get(f.category[i]));
  if (f.phase[i] == 'f') out += ",\"bp\":\"e\"";
  w.end_event();
}

void write_metadata(TraceEventWriter& w, std::string_view what, const std::function<void(std::string&)>& ids,
                    std::string_view arg, const std::function<void(std::string&)>& value) {
  std::string& out = w.begin_event();
  out += "\"ph\":\"M\",\"name\":";
  append_json_string(out, what);
  out += ',';
  ids(out);
  out += ",\"args\":{";
  append_json_string(out, arg);
  out += ':';
  value(out);
  out += '}';
  w.end_event();
}

// Process and thread names of one rank, and the processes' order: ranks in
// order, each rank's processes by their original sort (host before devices
// as Kineto orders them: by pid, GPU pids after the host's in its own file).
void write_rank_metadata(TraceEventWriter& w, const EventStore& s, const RankPlacement& p, size_t rank_index,
                         bool several_ranks) {
  std::set<int32_t> pids;
  std::set<std::pair<int32_t, int64_t>> threads;
  std::pair<int32_t, int64_t> last{INT32_MIN, INT64_MIN};
  for (size_t i = 0; i < s.events.size(); ++i) {
    std::pair<int32_t, int64_t> t{s.events.pid[i], s.events.tid[i]};
    if (t == last) continue;
    last = t;
    threads.insert(t);
    pids.insert(t.first);
  }
  std::map<int32_t, std::string> process_names(s.meta.process_names.begin(), s.meta.process_names.end());
  std::map<int64_t, std::string> thread_names(s.meta.thread_names.begin(), s.meta.thread_names.end());
  // Order as Kineto does: the host program, then its GPUs, then Kineto's
  // own named rows ("Spans", "Traces").
  std::set<int32_t> gpu_pids;
  for (uint32_t row : s.gpu_rows) gpu_pids.insert(s.events.pid[row]);
  std::vector<int32_t> ordered(pids.begin(), pids.end());
  auto group = [&](int32_t pid) { return pid < 0 ? 2 : gpu_pids.count(pid) ? 1 : 0; };
  std::stable_sort(ordered.begin(), ordered.end(), [&](int32_t a, int32_t b) { return group(a) < group(b); });
  int64_t order = 0;
  for (int32_t pid : ordered) {
    auto pid_member = [&](std::string& out) {
      out += "\"pid\":";
      append_pid(out, s, p, pid);
      out += ",\"tid\":0";
    };
    std::string name;
    if (auto it = process_names.find(pid); it != process_names.end()) name = it->second;
    // Kineto names GPU processes after the host program; the device tells them apart.
    if (gpu_pids.count(pid) && !name.empty()) name += fmt::format(" (GPU {})", pid);
    if (several_ranks) name = fmt::format("rank {} · {}", s.rank, name.empty() ? fmt::format("pid {}", pid) : name);
    if (!name.empty())
      write_metadata(w, "process_name", pid_member, "name", [&](std::string& out) { append_json_string(out, name); });
    const int64_t sort = static_cast<int64_t>(rank_index) * 1'000'000 + order++;
    write_metadata(w, "process_sort_index", pid_member, "sort_index",
                   [&](std::string& out) { fmt::format_to(std::back_inserter(out), "{}", sort); });
  }
  for (const auto& thread : threads) {
    const int32_t pid = thread.first;  // not a structured binding: clang 14 cannot capture one in a lambda
    const int64_t tid = thread.second;
    auto it = thread_names.find(tid);
    if (it == thread_names.end()) continue;
    write_metadata(
        w, "thread_name",
        [&](std::string& out) {
          out += "\"pid\":";
          append_pid(out, s, p, pid);
          out += ",\"tid\":";
          append_id(out, s, tid);
        },
        "name", [&](std::string& out) { append_json_string(out, it->second); });
  }
}

// The top-level members before "traceEvents": what the reader needs to read
// the file back as the same rank (one rank), and where each rank was placed.
std::string file_head(const AnalyzeReport& report, const TraceLayout& layout) {
  nlohmann::ordered_json head;
  head["displayTimeUnit"] = "ms";
  head["schemaVersion"] = 1;
  head["baseTimeNanoseconds"] = layout.base_time_ns;
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  std::set<int> seen;
  for (const auto* s : report.stores)
    for (const auto& d : s->meta.devices)
      if (seen.insert(d.id).second)
        devices.push_back({{"id", d.id},
                           {"name", d.name},
                           {"totalGlobalMem", d.total_global_mem},
                           {"computeMajor", d.compute_major},
                           {"computeMinor", d.compute_minor},
                           {"numSms", d.num_sms}});
  if (!devices.empty()) head["deviceProperties"] = devices;
  if (report.stores.size() == 1) {
    const auto& m = report.stores.front()->meta;
    nlohmann::ordered_json info;
    info["rank"] = report.stores.front()->rank;
    if (m.world_size) info["world_size"] = *m.world_size;
    if (!m.backend.empty()) info["backend"] = m.backend;
    head["distributedInfo"] = info;
  }
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (size_t i = 0; i < report.stores.size(); ++i) {
    const auto& p = layout.ranks[i];
    ranks.push_back({{"rank", p.rank},
                     {"file", report.stores[i]->source_path},
                     {"clock_shift_ns", p.shift_ns},
                     {"pids_renumbered", p.renumber}});
  }
  head["stepscope"] = {{"tool_version", kToolVersion}, {"stepscope_pid", layout.stepscope_pid}, {"ranks", ranks}};
  std::string text = head.dump();
  text.pop_back();  // reopen the object for traceEvents
  return text + ",\n\"traceEvents\":[";
}

}  // namespace

int64_t TraceLayout::index_of_rank(int64_t rank) const {
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i].rank == rank) return static_cast<int64_t>(i);
  return -1;
}

TraceLayout plan_trace_layout(const AnalyzeReport& report) {
  TraceLayout layout;
  const size_t n = report.stores.size();
  layout.ranks.resize(n);
  if (n == 0) return layout;
  layout.base_time_ns = report.stores.front()->meta.base_time_ns;
  for (const auto* s : report.stores) layout.base_time_ns = std::min(layout.base_time_ns, s->meta.base_time_ns);

  // Pids per rank; renumber every rank when any two share one.
  std::vector<std::set<int32_t>> pids(n);
  std::map<int32_t, int> owners;
  bool shared = false;
  for (size_t r = 0; r < n; ++r) {
    const auto& e = report.stores[r]->events;
    int32_t last = INT32_MIN;
    for (size_t i = 0; i < e.size(); ++i)
      if (e.pid[i] != last) pids[r].insert(last = e.pid[i]);
    for (size_t i = 0; i < report.stores[r]->flows.size(); ++i) pids[r].insert(report.stores[r]->flows.pid[i]);
    for (int32_t p : pids[r]) shared |= ++owners[p] > 1;
  }
  int32_t next_pid = 1;
  int32_t max_pid = 0;
  for (size_t r = 0; r < n; ++r) {
    auto& p = layout.ranks[r];
    p.rank = report.stores[r]->rank;
    p.shift_ns = report.stores[r]->meta.base_time_ns - layout.base_time_ns;
    p.renumber = shared;
    if (n > 1) {
      p.flow_id_stride = static_cast<int64_t>(n);
      p.flow_id_offset = static_cast<int64_t>(r);
    }
    for (int32_t pid : pids[r]) {
      if (shared) p.pid_map[pid] = next_pid++;
      max_pid = std::max(max_pid, shared ? next_pid - 1 : pid);
    }
  }
  layout.stepscope_pid = max_pid < INT32_MAX ? max_pid + 1 : INT32_MAX;
  return layout;
}

PerfettoResult write_perfetto(const AnalyzeReport& report, const std::string& path) {
  return write_perfetto(report, AtomicOutput::open(path));
}

PerfettoResult write_perfetto(const AnalyzeReport& report, AtomicOutput out) {
  PerfettoResult result;
  FileSink sink(std::move(out));
  if (!sink.ok()) {
    result.error = sink.error();
    return result;
  }
  const TraceLayout layout = plan_trace_layout(report);
  {
    TraceEventWriter w(sink);
    w.raw(file_head(report, layout));
    for (size_t r = 0; r < report.stores.size(); ++r)
      write_rank_metadata(w, *report.stores[r], layout.ranks[r], r, report.stores.size() > 1);
    for (size_t r = 0; r < report.stores.size(); ++r) {
      const EventStore& s = *report.stores[r];
      for (size_t i = 0; i < s.events.size(); ++i) write_event(w, s, layout.ranks[r], i);
      result.trace_events += s.events.size();
      for (size_t i = 0; i < s.flows.size(); ++i) write_flow(w, s, layout.ranks[r], i);
      result.flow_events += s.flows.size();
    }
    if (report.diagnosis) result.annotation_events = write_stepscope_tracks(w, report, *report.diagnosis, layout);
    w.raw("\n]}\n");
  }
  result.ok = sink.close();
  result.error = sink.error();
  result.bytes = sink.bytes_in();
  return result;
}

}  // namespace stepscope::report
