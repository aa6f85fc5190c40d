#include "analysis/hta_compat/hta_frame.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

namespace stepscope::analysis::hta {
namespace {

// The double HTA holds for a µs value written in the trace: Python's float()
// of the decimal text, i.e. the double nearest to ns / 1000. Below 2^53 ns the
// int64 -> double conversion is exact and IEEE division rounds correctly, so a
// plain division gives it; larger values (epoch timestamps with a fraction)
// go through the correctly rounded decimal parser.
double us_from_ns(int64_t ns) {
  constexpr int64_t kExact = int64_t{1} << 53;
  if (ns > -kExact && ns < kExact) return static_cast<double>(ns) / 1000.0;
  const uint64_t mag = ns < 0 ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  char text[48];
  int len = std::snprintf(text, sizeof text, "%s%llu.%03llu", ns < 0 ? "-" : "",
                          static_cast<unsigned long long>(mag / 1000), static_cast<unsigned long long>(mag % 1000));
  double us = 0;
  std::from_chars(text, text + len, us);
  return us;
}

// HTA's idle-time breakdown only counts rows with one of these categories.
bool is_kernel_category(std::string_view cat) {
  return cat == "kernel" || cat == "Kernel" || cat == "gpu_memset" || cat == "Memset" || cat == "gpu_memcpy" ||
         cat == "Memcpy" || cat == "mtia_ccp_events";
}

// A rank's frame before alignment: ts still in µs on the trace clock.
struct Draft {
  HtaRankFrame frame;
  std::vector<int64_t> ts_us;
};

Draft read_rank(const trace::EventStore& store, int64_t rank, HtaRelease release) {
  Draft d;
  d.frame.store = &store;
  d.frame.release = release;
  d.frame.rank = rank;
  const auto& ev = store.events;
  const size_t n = ev.size();

  // HTA's row order is the record order in traceEvents; the store is time-sorted.
  std::vector<uint32_t> rows(n);
  for (uint32_t i = 0; i < n; ++i) rows[i] = i;
  std::sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) { return ev.seq[a] < ev.seq[b]; });

  // HTA rounds every event of a file once one "ts" is not a JSON integer.
  bool rounded = store.meta.fractional_timestamps;
  for (size_t i = 0; i < n && !rounded; ++i) rounded = ev.ts_ns[i] % 1000 != 0;
  d.frame.rounded = rounded;

  const trace::StringId bw_key = store.strings.find("memory bandwidth (GB/s)");
  const trace::StringId event_sync = store.strings.find("Event Sync");
  const trace::StringId context_sync = store.strings.find("Context Sync");
  const trace::StringId trace_cat = store.strings.find("Trace");
  const trace::StringId empty = store.strings.find("");

  // Classification depends only on (name, category): cache it per pair of ids.
  std::unordered_map<uint64_t, HtaKernelType> type_cache;
  std::unordered_map<trace::StringId, bool> kernel_cat_cache;

  d.frame.events.reserve(n);
  d.ts_us.reserve(n);
  for (uint32_t row : rows) {
    // HTA drops rows without "dur" (instants, counters), without "cat" (the
    // store cannot tell a missing cat from "", both are dropped), and Kineto's
    // own "Trace" span.
    if ((ev.flags[row] & trace::kNoDuration) || ev.category[row] == empty || ev.category[row] == trace_cat) {
      ++d.frame.dropped_records;
      continue;
    }
    HtaEvent e;
    int64_t ts_us = 0;
    if (rounded) {
      const double ts = us_from_ns(ev.ts_ns[row]);
      const double end = std::floor(ts + us_from_ns(ev.dur_ns[row]));
      ts_us = static_cast<int64_t>(std::ceil(ts));
      e.dur = end - static_cast<double>(ts_us);
    } else {
      ts_us = ev.ts_ns[row] / 1000;
      e.dur = us_from_ns(ev.dur_ns[row]);
    }
    e.index = ev.seq[row];
    e.stream = (ev.flags[row] & trace::kStreamFromTid) ? -1 : ev.stream[row];
    e.correlation = ev.correlation[row];
    if (bw_key != trace::StringTable::kMissing) e.memory_bw_gbps = store.arg_number(row, bw_key).value_or(0.0);
    e.row = row;
    e.name = ev.name[row];
    e.category = ev.category[row];
    const uint64_t pair = (static_cast<uint64_t>(e.name) << 32) | e.category;
    auto it = type_cache.find(pair);
    if (it == type_cache.end())
      it = type_cache.emplace(pair, classify_hta_kernel(store.strings.get(e.name), store.strings.get(e.category), release)).first;
    e.type = it->second;
    auto kc = kernel_cat_cache.find(e.category);
    if (kc == kernel_cat_cache.end())
      kc = kernel_cat_cache.emplace(e.category, is_kernel_category(store.strings.get(e.category))).first;
    e.kernel_category = kc->second;
    e.gpu_like = (e.stream >= 0 && e.correlation >= 0) || e.name == event_sync || e.name == context_sync;
    d.frame.events.push_back(e);
    d.ts_us.push_back(ts_us);
  }

  // index_correlation: every host event with a correlation points at the
  // last GPU-like event with the same correlation, and each GPU-like event at
  // the last such host event (HTA assigns pair by pair; the last write wins).
  struct Last {
    int64_t cpu = -1;
    int64_t gpu = -1;
  };
  std::unordered_map<int64_t, Last> last_of;
  for (auto& e : d.frame.events) {
    e.index_correlation = std::min<int64_t>(e.correlation, 0);
    if (e.correlation == -1) continue;
    Last& l = last_of[e.correlation];
    (e.gpu_like ? l.gpu : l.cpu) = e.index;
  }
  for (auto& e : d.frame.events) {
    if (e.correlation == -1) continue;
    const Last& l = last_of[e.correlation];
    if (l.cpu >= 0 && l.gpu >= 0) e.index_correlation = e.gpu_like ? l.cpu : l.gpu;
  }
  return d;
}

// HTA's step filter (§1.10) on one aligned frame.
void filter_to_steps(HtaRankFrame& frame, const std::vector<bool>& is_step_name) {
  std::vector<HtaEvent> cpu;
  double last = -std::numeric_limits<double>::infinity();
  bool any_step = false;
  for (const auto& e : frame.events) {
    if (!e.gpu_like && is_step_name[e.name]) {
      last = any_step ? std::max(last, e.ts) : e.ts;
      any_step = true;
    }
  }
  // Without a step on this rank HTA compares against NaN: no host event stays.
  if (any_step) {
    for (const auto& e : frame.events)
      if (!e.gpu_like && e.ts < last) cpu.push_back(e);
  }
  std::unordered_map<int64_t, int64_t> matches;  // correlation -> kept host events carrying it
  for (const auto& e : cpu) ++matches[e.correlation];

  // pandas' inner merge (sort=False): GPU rows grouped by key in order of the
  // key's first appearance, each repeated once per matching host row.
  std::vector<int64_t> key_order;
  std::unordered_map<int64_t, std::vector<uint32_t>> rows_of_key;
  for (uint32_t i = 0; i < frame.events.size(); ++i) {
    const auto& e = frame.events[i];
    if (!e.gpu_like) continue;
    auto m = matches.find(e.correlation);
    if (m == matches.end()) continue;
    auto [it, fresh] = rows_of_key.try_emplace(e.correlation);
    if (fresh) key_order.push_back(e.correlation);
    it->second.push_back(i);
  }
  std::vector<HtaEvent> out;
  for (int64_t key : key_order) {
    const int64_t repeat = matches[key];
    for (uint32_t i : rows_of_key[key])
      for (int64_t r = 0; r < repeat; ++r) out.push_back(frame.events[i]);
  }
  out.insert(out.end(), cpu.begin(), cpu.end());
  frame.events = std::move(out);
}

// re.match(r"ProfilerStep\s*#\s*(\d+)", name): the step number without
// leading zeros (Python's str(int(...))), or "" when the name is no step.
std::string step_number(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep";
  if (!name.starts_with(kPrefix)) return {};
  size_t p = kPrefix.size();
  auto skip_space = [&] {
    while (p < name.size() && (name[p] == ' ' || (name[p] >= '\t' && name[p] <= '\r'))) ++p;
  };
  skip_space();
  if (p >= name.size() || name[p] != '#') return {};
  ++p;
  skip_space();
  size_t begin = p;
  while (p < name.size() && name[p] >= '0' && name[p] <= '9') ++p;
  if (p == begin) return {};
  std::string_view digits = name.substr(begin, p - begin);
  while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
  return std::string(digits);
}

}  // namespace

HtaFrames build_hta_frames(const std::vector<const trace::EventStore*>& stores, HtaRelease release) {
  HtaFrames out;

  // Rank of each file; for a rank given by two files, the one listed last wins.
  std::map<int64_t, const trace::EventStore*> by_rank;
  for (const auto* s : stores) {
    const int64_t rank = s->meta.rank.value_or(0);
    auto [it, fresh] = by_rank.emplace(rank, s);
    if (!fresh) {
      const trace::EventStore* loser = s;
      if (s->source_path > it->second->source_path) std::swap(loser, it->second);
      out.notes.push_back("rank " + std::to_string(rank) + " is given by two traces; HTA keeps the one listed last, " +
                          "ignoring " + loser->source_path);
    }
  }

  std::vector<Draft> drafts;
  drafts.reserve(by_rank.size());
  for (const auto& [rank, store] : by_rank) drafts.push_back(read_rank(*store, rank, release));

  // Align every rank on the earliest kept start.
  int64_t min_ts = 0;
  bool any = false;
  for (const auto& d : drafts)
    for (int64_t t : d.ts_us) {
      min_ts = any ? std::min(min_ts, t) : t;
      any = true;
    }
  out.origin_us = min_ts;
  for (auto& d : drafts)
    for (size_t i = 0; i < d.ts_us.size(); ++i) d.frame.events[i].ts = static_cast<double>(d.ts_us[i] - min_ts);

  // Distinct names and categories, over all ranks, that contain "ProfilerStep".
  auto names_a_step = [](std::string_view s) { return s.find("ProfilerStep") != std::string_view::npos; };
  std::set<std::string, std::less<>> step_symbols;
  for (const auto& d : drafts) {
    const auto& strings = d.frame.store->strings;
    std::vector<bool> used(strings.size(), false);
    for (const auto& e : d.frame.events) {
      used[e.name] = true;
      used[e.category] = true;
    }
    for (trace::StringId id = 0; id < used.size(); ++id)
      if (used[id] && names_a_step(strings.get(id))) step_symbols.emplace(strings.get(id));
  }
  out.step_filter_applied = step_symbols.size() >= 2;
  for (auto& d : drafts) {
    HtaRankFrame& frame = d.frame;
    if (out.step_filter_applied) {
      const auto& strings = frame.store->strings;
      std::vector<bool> is_step_name(strings.size(), false);
      for (trace::StringId id = 0; id < strings.size(); ++id)
        is_step_name[id] = names_a_step(strings.get(id)) && step_symbols.count(strings.get(id)) > 0;
      filter_to_steps(frame, is_step_name);
    }
    for (const auto& e : frame.events)
      if (e.on_stream() && e.dur < 0) ++frame.negative_durations;
    out.ranks.push_back(std::move(frame));
  }

  // Step numbers named in the (filtered) frames, ascending as numbers.
  std::set<std::pair<size_t, std::string>> steps;  // (digits, number): numeric order
  for (const auto& frame : out.ranks) {
    std::vector<bool> seen(frame.store->strings.size(), false);
    for (const auto& e : frame.events) {
      if (seen[e.name]) continue;
      seen[e.name] = true;
      std::string n = step_number(frame.name_of(e));
      if (!n.empty()) steps.emplace(n.size(), std::move(n));
    }
  }
  for (auto& s : steps) out.profiler_steps.push_back(s.second);
  return out;
}

}  // namespace stepscope::analysis::hta
