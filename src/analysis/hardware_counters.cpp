#include "analysis/hardware_counters.h"

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <set>
#include <tuple>

#include "trace/cupti_counter_names.h"

namespace stepscope::analysis {

namespace {

using trace::EventStore;

// The SASS thread-instruction counters of floating-point math, with the FLOPs
// one instruction does per thread: a fused multiply-add is two (Kineto's
// kineto__cuda_core_flops expands to these nine; HTA weighs them the same).
enum class Precision { kFp32, kFp16, kFp64 };
struct FlopCounter {
  std::string_view name;
  double flops;
  Precision precision;
};
constexpr std::array kFlopCounters = {
    FlopCounter{trace::cupti::kFadd, 1, Precision::kFp32}, FlopCounter{trace::cupti::kFmul, 1, Precision::kFp32},
    FlopCounter{trace::cupti::kFfma, 2, Precision::kFp32}, FlopCounter{trace::cupti::kHadd, 1, Precision::kFp16},
    FlopCounter{trace::cupti::kHmul, 1, Precision::kFp16}, FlopCounter{trace::cupti::kHfma, 2, Precision::kFp16},
    FlopCounter{trace::cupti::kDadd, 1, Precision::kFp64}, FlopCounter{trace::cupti::kDmul, 1, Precision::kFp64},
    FlopCounter{trace::cupti::kDfma, 2, Precision::kFp64},
};

void add_to(std::optional<double>& sum, double v) { sum = sum.value_or(0.0) + v; }
void add_to(std::optional<double>& sum, const std::optional<double>& v) {
  if (v) add_to(sum, *v);
}

CounterDerived derive(const std::vector<std::pair<std::string, double>>& counters) {
  CounterDerived d;
  for (const auto& [name, value] : counters) {
    for (const FlopCounter& c : kFlopCounters) {
      if (name != c.name) continue;
      const double flops = c.flops * value;
      add_to(d.cuda_core_flops, flops);
      add_to(c.precision == Precision::kFp32 ? d.fp32_flops
             : c.precision == Precision::kFp16 ? d.fp16_flops
                                               : d.fp64_flops,
             flops);
    }
    if (name == trace::cupti::kTensorInsts) add_to(d.tensor_core_insts, value);
    if (name == trace::cupti::kDramRead || name == trace::cupti::kDramWrite) add_to(d.dram_bytes, value);
  }
  return d;
}

// The numeric arguments of row i: a range's counters.
std::vector<std::pair<std::string, double>> counters_of(const EventStore& s, uint32_t i) {
  std::vector<std::pair<std::string, double>> out;
  const EventStore::ArgRows rows = s.arg_rows(i);
  for (uint32_t k = rows.first; k < rows.last; ++k) {
    const int64_t v = s.args.value[k];
    double value;
    if (s.args.type[k] == trace::ArgType::kInt) value = static_cast<double>(v);
    else if (s.args.type[k] == trace::ArgType::kDouble) value = std::bit_cast<double>(v);
    else continue;
    out.emplace_back(std::string(s.strings.get(s.args.key[k])), value);
  }
  return out;
}

// For each launch row (in `launches`), the outermost and innermost CPU op
// that encloses it on its thread, by time: a sweep over the thread's ops and
// launches in start order with a stack of the ops still open.
struct Enclosing {
  uint32_t top = EventStore::kNoRow;
  uint32_t bottom = EventStore::kNoRow;
};
std::vector<Enclosing> enclosing_ops(const EventStore& s, const std::vector<uint32_t>& launches) {
  struct Item {
    int32_t pid;
    int64_t tid;
    int64_t ts;
    bool is_launch;
    int64_t end;
    uint32_t row;
    uint32_t index;  // into launches, for a launch
  };
  const auto& e = s.events;
  std::vector<Item> items;
  items.reserve(s.cpu_op_rows.size() + launches.size());
  for (uint32_t r : s.cpu_op_rows)
    items.push_back({e.pid[r], e.tid[r], e.ts_ns[r], false, e.ts_ns[r] + e.dur_ns[r], r, 0});
  for (uint32_t i = 0; i < launches.size(); ++i) {
    const uint32_t r = launches[i];
    items.push_back({e.pid[r], e.tid[r], e.ts_ns[r], true, e.ts_ns[r] + e.dur_ns[r], r, i});
  }
  // Same thread together, by start; at one start an op before a launch (it
  // may enclose it) and longer ops first (they enclose shorter ones).
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return std::tie(a.pid, a.tid, a.ts, a.is_launch, b.end, a.row) <
           std::tie(b.pid, b.tid, b.ts, b.is_launch, a.end, b.row);
  });
  std::vector<Enclosing> out(launches.size());
  std::vector<const Item*> open;
  for (size_t k = 0; k < items.size(); ++k) {
    const Item& it = items[k];
    if (k > 0 && (items[k - 1].pid != it.pid || items[k - 1].tid != it.tid)) open.clear();
    while (!open.empty() && open.back()->end < it.end) open.pop_back();
    if (it.is_launch) {
      if (!open.empty()) out[it.index] = {open.front()->row, open.back()->row};
    } else {
      open.push_back(&it);
    }
  }
  return out;
}

std::string name_or_empty(const EventStore& s, uint32_t row) {
  return row == EventStore::kNoRow ? std::string() : std::string(s.name_of(row));
}

// Groups rows by a name, most CUDA-core FLOPs first (then most ranges, then name).
template <typename Key>
std::vector<CounterGroup> group_by(const std::vector<CounterRangeRow>& rows, Key key) {
  std::map<std::string, CounterGroup> groups;
  for (const CounterRangeRow& r : rows) {
    CounterGroup& g = groups[key(r)];
    ++g.ranges;
    g.derived.add(r.derived);
  }
  std::vector<CounterGroup> out;
  for (auto& [name, g] : groups) {
    g.name = name;
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(), [](const CounterGroup& a, const CounterGroup& b) {
    const double fa = a.derived.cuda_core_flops.value_or(-1), fb = b.derived.cuda_core_flops.value_or(-1);
    if (fa != fb) return fa > fb;
    return a.ranges > b.ranges;
  });
  return out;
}

}  // namespace

void CounterDerived::add(const CounterDerived& o) {
  add_to(cuda_core_flops, o.cuda_core_flops);
  add_to(fp32_flops, o.fp32_flops);
  add_to(fp16_flops, o.fp16_flops);
  add_to(fp64_flops, o.fp64_flops);
  add_to(tensor_core_insts, o.tensor_core_insts);
  add_to(dram_bytes, o.dram_bytes);
}

bool is_kernel_launch_call(std::string_view n) {
  for (std::string_view prefix : {"cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cuLaunchKernel",
                                  "cuLaunchCooperativeKernel", "hipLaunchKernel", "hipExtLaunchKernel",
                                  "hipModuleLaunchKernel"}) {
    if (!n.starts_with(prefix)) continue;
    // The API's own name or a suffixed variant (cudaLaunchKernelExC,
    // cuLaunchKernelEx, ..._ptsz); not a longer word that merely starts so.
    const std::string_view rest = n.substr(prefix.size());
    if (rest.empty() || rest.starts_with("Ex") || rest.starts_with("_")) return true;
  }
  return false;
}

HardwareCountersResult analyze_hardware_counters(const EventStore& s) {
  HardwareCountersResult r;
  const auto& e = s.events;
  std::vector<uint32_t> ranges;
  for (uint32_t i = 0; i < e.size(); ++i)
    if (e.kind[i] == trace::EventKind::kCounterRange) ranges.push_back(i);
  r.ranges = static_cast<int64_t>(ranges.size());
  if (ranges.empty()) return r;

  std::set<int32_t> devices;
  for (uint32_t i : ranges) devices.insert(e.pid[i]);
  r.devices = static_cast<int64_t>(devices.size());

  // Kernel launches, in time order (runtime_rows is).
  std::vector<uint32_t> launches;
  std::vector<int8_t> launch_name(s.strings.size(), -1);  // per name id: 1 launch, 0 not, -1 unknown
  for (uint32_t row : s.runtime_rows) {
    int8_t& known = launch_name[e.name[row]];
    if (known < 0) known = is_kernel_launch_call(s.name_of(row)) ? 1 : 0;
    if (known) launches.push_back(row);
  }
  r.kernel_launches = static_cast<int64_t>(launches.size());

  // Ranges follow the kernels in launch order (Kineto numbers them so), which
  // is the only link the trace has: it holds when each launch made one range.
  std::vector<Enclosing> ops;
  if (r.devices > 1) {
    r.match_note = "ranges on " + std::to_string(r.devices) +
                   " devices: the launches do not say which device they ran on, so ranges are not tied to operators";
  } else if (launches.size() != ranges.size()) {
    r.match_note = std::to_string(ranges.size()) + " ranges but " + std::to_string(launches.size()) +
                   " kernel launches: ranges are tied to launches by order, which needs one range per launch "
                   "(a session that reached its range limit, cuda_profiler_max_ranges, records fewer)";
  } else {
    r.matched_to_launches = true;
    ops = enclosing_ops(s, launches);
  }

  r.rows.reserve(ranges.size());
  std::map<std::string, CounterTotal> totals;
  for (size_t k = 0; k < ranges.size(); ++k) {
    const uint32_t i = ranges[k];
    CounterRangeRow row;
    row.name = std::string(s.name_of(i));
    row.device = e.pid[i];
    if (r.matched_to_launches) {
      row.top_level_op = name_or_empty(s, ops[k].top);
      row.bottom_level_op = name_or_empty(s, ops[k].bottom);
    }
    row.counters = counters_of(s, i);
    row.derived = derive(row.counters);
    for (const auto& [name, value] : row.counters) {
      CounterTotal& t = totals[name];
      ++t.ranges;
      t.total += value;
    }
    r.total.add(row.derived);
    r.rows.push_back(std::move(row));
  }
  for (auto& [name, t] : totals) {
    t.name = name;
    r.counters.push_back(std::move(t));
  }
  r.kernels = group_by(r.rows, [](const CounterRangeRow& x) { return x.name; });
  if (r.matched_to_launches)
    r.ops = group_by(r.rows, [](const CounterRangeRow& x) {
      return x.top_level_op.empty() ? std::string("(no enclosing op)") : x.top_level_op;
    });
  return r;
}

}  // namespace stepscope::analysis
