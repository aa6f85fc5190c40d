#include "trace/process_windows.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>

namespace stepscope::trace {
namespace {

bool is_host_kind(EventKind k) {
  return k == EventKind::kCpuOp || k == EventKind::kUserAnnotation || k == EventKind::kPythonFunction ||
         k == EventKind::kRuntime;
}

// Largest id value among the columns, or -1.
int64_t max_of(const CompactInt64Column& c) {
  int64_t m = -1;
  for (size_t i = 0; i < c.size(); ++i) m = std::max(m, c[i]);
  return m;
}

int64_t shifted_id(int64_t id, int64_t offset) { return id == kNone ? kNone : id + offset; }

}  // namespace

std::optional<ProcessIdentity> process_identity(const EventStore& store) {
  const EventColumns& ev = store.events;
  std::map<int32_t, size_t> host_rows_of_pid;
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < ev.size(); ++i) {
    if (is_host_kind(ev.kind[i])) ++host_rows_of_pid[ev.pid[i]];
    first = std::min(first, ev.ts_ns[i]);
    last = std::max(last, ev.ts_ns[i] + ev.dur_ns[i]);
  }
  if (host_rows_of_pid.empty()) return std::nullopt;
  ProcessIdentity id;
  size_t most = 0;
  for (const auto& [pid, n] : host_rows_of_pid)
    if (n > most) most = n, id.pid = pid;
  for (const auto& [pid, name] : store.meta.process_names)
    if (pid == id.pid) id.process_name = name;  // the latest name of the pid
  id.rank = store.meta.rank;
  // Times are below 2^61 ns and base times are clock readings: no overflow.
  id.first_ns = store.meta.base_time_ns + first;
  id.last_ns = store.meta.base_time_ns + last;
  return id;
}

bool same_process_later_window(const ProcessIdentity& earlier, const ProcessIdentity& later) {
  if (earlier.pid != later.pid) return false;
  if (earlier.process_name.empty() || earlier.process_name != later.process_name) return false;
  if (earlier.rank != later.rank) return false;  // different distributedInfo ranks are different ranks
  return later.first_ns >= earlier.last_ns;
}

void append_window(EventStore& into, const EventStore& later) {
  // Strings of `later` in `into`'s table.
  std::vector<StringId> str(later.strings.size());
  for (size_t s = 0; s < str.size(); ++s) str[s] = into.strings.intern(later.strings.get(static_cast<StringId>(s)));
  const int64_t shift = later.meta.base_time_ns - into.meta.base_time_ns;
  // The time between the windows was not recorded.
  int64_t into_end = 0, later_start = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < into.events.size(); ++i)
    into_end = std::max(into_end, into.events.ts_ns[i] + into.events.dur_ns[i]);
  for (size_t i = 0; i < later.events.size(); ++i) later_start = std::min(later_start, later.events.ts_ns[i] + shift);
  for (const auto& [from, to] : later.meta.unrecorded) into.meta.unrecorded.emplace_back(from + shift, to + shift);
  if (later_start > into_end) into.meta.unrecorded.emplace_back(into_end, later_start);
  std::sort(into.meta.unrecorded.begin(), into.meta.unrecorded.end());
  // One offset for every id that joins rows (correlation, External id, flow
  // id, the correlation a stream wait names): Kineto restarts External ids
  // in each window, and CUPTI correlation ids are only unique within one
  // profiling session.
  const int64_t id_offset =
      1 + std::max({max_of(into.events.correlation), max_of(into.events.external_id), max_of(into.flows.id), int64_t{0}});
  const StringId wait_corr_key = into.strings.find("wait_on_cuda_event_record_corr_id");

  const size_t arg_base = into.args.size();
  const ArgColumns& la = later.args;
  for (size_t k = 0; k < la.size(); ++k) {
    const StringId key = str[la.key[k]];
    into.args.key.push_back(static_cast<uint16_t>(key));  // kept keys are interned first: the same small ids
    into.args.type.push_back(la.type[k]);
    int64_t v = la.value[k];
    if (la.type[k] == ArgType::kString || la.type[k] == ArgType::kJson) v = str[static_cast<StringId>(v)];
    else if (la.type[k] == ArgType::kInt && key == wait_corr_key) v = shifted_id(v, id_offset);
    into.args.value.push_back(v);
  }

  EventColumns& e = into.events;
  const EventColumns& l = later.events;
  const uint32_t seq_base = e.seq.empty() ? 0 : *std::max_element(e.seq.begin(), e.seq.end()) + 1;
  for (size_t i = 0; i < l.size(); ++i) {
    e.ts_ns.push_back(l.ts_ns[i] + shift);
    e.dur_ns.push_back(l.dur_ns[i]);
    e.name.push_back(str[l.name[i]]);
    e.category.push_back(str[l.category[i]]);
    e.kind.push_back(l.kind[i]);
    e.pid.push_back(l.pid[i]);
    e.tid.push_back(l.tid[i]);
    e.stream.push_back(l.stream[i]);
    e.flags.push_back(l.flags[i]);
    e.device.push_back(l.device[i]);
    e.correlation.push_back(shifted_id(l.correlation[i], id_offset));
    e.external_id.push_back(shifted_id(l.external_id[i], id_offset));
    e.seq.push_back(seq_base + l.seq[i]);
    e.args_begin.push_back(static_cast<uint32_t>(arg_base + l.args_begin[i]));
    e.args_count.push_back(l.args_count[i]);
  }

  FlowColumns& f = into.flows;
  const FlowColumns& lf = later.flows;
  for (size_t i = 0; i < lf.size(); ++i) {
    f.id.push_back(shifted_id(lf.id[i], id_offset));
    f.category.push_back(str[lf.category[i]]);
    f.phase.push_back(lf.phase[i]);
    f.ts_ns.push_back(lf.ts_ns[i] + shift);
    f.pid.push_back(lf.pid[i]);
    f.tid.push_back(lf.tid[i]);
  }

  TraceMetadata& m = into.meta;
  for (const DeviceProperties& d : later.meta.devices)
    if (std::none_of(m.devices.begin(), m.devices.end(), [&](const DeviceProperties& x) { return x.id == d.id; }))
      m.devices.push_back(d);
  for (const auto& t : later.meta.thread_names)
    if (std::find(m.thread_names.begin(), m.thread_names.end(), t) == m.thread_names.end()) m.thread_names.push_back(t);
  for (const auto& p : later.meta.process_names)
    if (std::find(m.process_names.begin(), m.process_names.end(), p) == m.process_names.end()) m.process_names.push_back(p);
  m.fractional_timestamps = m.fractional_timestamps || later.meta.fractional_timestamps;

  // Import counters: the logged occurrences name the file their byte offset is in.
  std::array<uint64_t, static_cast<size_t>(ImportCounter::kCount)> logged{};
  for (const ImportLogEntry& x : later.stats.log()) {
    into.stats.add(x.counter, x.byte_offset, later.source_path + ": " + x.message);
    ++logged[static_cast<size_t>(x.counter)];
  }
  for (size_t c = 0; c < logged.size(); ++c) {
    const uint64_t rest = later.stats.count(static_cast<ImportCounter>(c)) - logged[c];
    if (rest) into.stats.add_silent(static_cast<ImportCounter>(c), rest);
  }
  // The joins again; the counters stay as they are: each window's ambiguous
  // correlations were counted when it was read, and the offset keeps the
  // windows' ids apart, so rebuilding finds no new ones.
  const ImportStats counted = into.stats;
  into.build_indexes();
  into.stats = counted;
}

std::vector<std::string> merge_process_windows(std::vector<std::unique_ptr<EventStore>>& stores) {
  std::vector<std::string> notes;
  struct Item {
    std::optional<ProcessIdentity> id;
    size_t index;
  };
  std::vector<Item> items;
  for (size_t i = 0; i < stores.size(); ++i) {
    std::optional<ProcessIdentity> id;
    // Only windows cut by ProfilerStep markers: a file without them is
    // analysed as one window over its whole GPU span, which would then run
    // across the unrecorded time between the files.
    if (stores[i]->stats.count(ImportCounter::kTruncatedInput) == 0 && !stores[i]->step_rows.empty())
      id = process_identity(*stores[i]);
    items.push_back({id, i});
  }
  // Earliest window first, so each file is appended to the group it follows.
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    if (a.id.has_value() != b.id.has_value()) return a.id.has_value();
    return a.id && a.id->first_ns < b.id->first_ns;
  });
  struct Group {
    size_t head;           // index of the store the others are appended to
    ProcessIdentity last;  // identity of the latest window appended
    std::vector<std::string> files;
  };
  std::vector<Group> groups;
  std::vector<bool> merged_away(stores.size(), false);
  for (const Item& it : items) {
    if (!it.id) continue;
    Group* g = nullptr;
    for (Group& c : groups)
      if (same_process_later_window(c.last, *it.id)) {
        if (g) {  // two candidate processes: which one wrote the file is unknown, keep it apart
          g = nullptr;
          break;
        }
        g = &c;
      }
    if (!g) {
      groups.push_back({it.index, *it.id, {stores[it.index]->source_path}});
      continue;
    }
    append_window(*stores[g->head], *stores[it.index]);
    g->last = *it.id;
    g->files.push_back(stores[it.index]->source_path);
    merged_away[it.index] = true;
  }
  for (const Group& g : groups) {
    if (g.files.size() < 2) continue;
    std::string list;
    for (size_t i = 0; i < g.files.size(); ++i)
      list += (i == 0 ? "" : i + 1 == g.files.size() ? " and " : ", ") + g.files[i];
    notes.push_back(list + " are one process (pid " + std::to_string(g.last.pid) + "): read as one rank");
  }
  std::vector<std::unique_ptr<EventStore>> kept;
  for (size_t i = 0; i < stores.size(); ++i)
    if (!merged_away[i]) kept.push_back(std::move(stores[i]));
  stores = std::move(kept);
  return notes;
}

}  // namespace stepscope::trace
