#include "memory/trace_join.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace stepscope::memory {

using trace::EventKind;
using trace::EventStore;
using trace::snapshot::kNoTime;
using trace::snapshot::MemorySnapshot;
using trace::snapshot::TraceAction;

namespace {

constexpr int64_t kWindowNs = 1'000'000'000;  // a pair further apart than 1 s does not vote
constexpr int64_t kBinNs = 20'000;            // votes are counted in bins of 20 µs
constexpr int64_t kCudaDeviceType = 1;        // c10::DeviceType::CUDA in [memory] events' "Device Type"

// The trace's CUDA allocations of one device: (address, size) -> times (absolute ns), in time order.
std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> trace_allocations(const EventStore& store, int32_t device) {
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> out;
  const trace::StringId k_addr = store.strings.find("Addr"), k_bytes = store.strings.find("Bytes"),
                        k_type = store.strings.find("Device Type"), k_id = store.strings.find("Device Id");
  if (k_addr == trace::StringTable::kMissing || k_bytes == trace::StringTable::kMissing) return out;
  const auto& ev = store.events;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev.kind[i] != EventKind::kMemory) continue;
    const auto addr = store.arg_int(i, k_addr), bytes = store.arg_int(i, k_bytes);
    if (!addr || !bytes || *bytes <= 0) continue;
    if (store.arg_int(i, k_type).value_or(kCudaDeviceType) != kCudaDeviceType) continue;
    if (store.arg_int(i, k_id).value_or(device) != device) continue;
    out[{*addr, *bytes}].push_back(store.meta.base_time_ns + ev.ts_ns[i]);
  }
  return out;
}

// The innermost CPU op around an absolute time, over all threads: the one
// that started last among those that contain it.
class OpFinder {
 public:
  explicit OpFinder(const EventStore& store) : store_(store) {
    for (uint32_t row : store.cpu_op_rows) by_thread_[store.events.tid[row]].push_back(row);
    for (auto& [tid, rows] : by_thread_) {
      // Rows are in time order; a stack gives each op the op it is nested in.
      std::vector<uint32_t>& parent = parents_[tid];
      parent.assign(rows.size(), UINT32_MAX);
      std::vector<uint32_t> open;
      for (uint32_t k = 0; k < rows.size(); ++k) {
        while (!open.empty() && end(rows[open.back()]) <= start(rows[k])) open.pop_back();
        if (!open.empty()) parent[k] = open.back();
        open.push_back(k);
      }
    }
  }

  // Row of the op, or UINT32_MAX.
  uint32_t at(int64_t t) const {
    uint32_t best = UINT32_MAX;
    for (const auto& [tid, rows] : by_thread_) {
      auto it = std::upper_bound(rows.begin(), rows.end(), t, [&](int64_t x, uint32_t r) { return x < start(r); });
      if (it == rows.begin()) continue;
      uint32_t k = static_cast<uint32_t>(it - rows.begin() - 1);
      const std::vector<uint32_t>& parent = parents_.at(tid);
      while (k != UINT32_MAX && end(rows[k]) < t) k = parent[k];
      if (k != UINT32_MAX && (best == UINT32_MAX || start(rows[k]) > start(best))) best = rows[k];
    }
    return best;
  }

 private:
  int64_t start(uint32_t row) const { return store_.meta.base_time_ns + store_.events.ts_ns[row]; }
  int64_t end(uint32_t row) const { return start(row) + store_.events.dur_ns[row]; }

  const EventStore& store_;
  std::map<int64_t, std::vector<uint32_t>> by_thread_;
  std::map<int64_t, std::vector<uint32_t>> parents_;
};

}  // namespace

TraceJoin join_trace(const MemorySnapshot& s, int32_t device, const EventStore& store, size_t top_ops) {
  TraceJoin j;
  j.device = device;
  std::vector<size_t> rows;
  for (size_t e = 0; e < s.trace.rows(); ++e)
    if (s.trace.device[e] == device && s.trace.time_us[e] != kNoTime) rows.push_back(e);
  if (rows.empty()) {
    j.note = "the snapshot's history has no times on this device (PyTorch before 2.2 records none)";
    return j;
  }
  // The offset: votes of allocation pairs with the same (address, size).
  const auto allocations = trace_allocations(store, device);
  std::vector<int64_t> votes;
  for (size_t e : rows) {
    if (s.trace.action[e] != TraceAction::kAlloc) continue;
    const auto it = allocations.find({static_cast<int64_t>(s.trace.addr[e]), static_cast<int64_t>(s.trace.size[e])});
    if (it == allocations.end()) continue;
    const int64_t t = snapshot_time_on_trace(s.trace.time_us[e], 0);
    if (t > INT64_MAX / 2 || t < INT64_MIN / 2) continue;  // no real clock is that far out; t ± 1 s must not wrap
    auto lo = std::lower_bound(it->second.begin(), it->second.end(), t - kWindowNs);
    for (; lo != it->second.end() && *lo <= t + kWindowNs && votes.size() < (1u << 22); ++lo) votes.push_back(*lo - t);
  }
  j.votes = votes.size();
  if (!votes.empty()) {
    std::unordered_map<int64_t, uint64_t> bins;
    uint64_t best = 0;
    for (int64_t v : votes) best = std::max(best, ++bins[v >= 0 ? v / kBinNs : -((-v + kBinNs - 1) / kBinNs)]);
    // A loop reuses the same (address, size) every step, so a short trace
    // inside a long history gets as many votes at the true offset plus or
    // minus whole steps as at the true one. Both clocks are the same clock,
    // calibrated twice: of the bins within 10% of the most votes, the one
    // nearest zero is taken.
    int64_t best_bin = 0;
    bool found = false;
    for (const auto& [b, n] : bins) {
      if (10 * n < 9 * best) continue;
      const int64_t mag = b < 0 ? -b : b, best_mag = best_bin < 0 ? -best_bin : best_bin;
      if (!found || mag < best_mag || (mag == best_mag && b < best_bin)) best_bin = b, found = true;
    }
    std::vector<int64_t> near;
    for (int64_t v : votes)
      if (v >= (best_bin - 1) * kBinNs && v < (best_bin + 2) * kBinNs) near.push_back(v);
    std::nth_element(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(near.size() / 2), near.end());
    j.offset_ns = near[near.size() / 2];
    j.matched = near.size();
    j.aligned_by_allocations = true;
    j.note = fmt::format(
        "clocks aligned by {} allocations found in both files (address and size): the trace runs {:.3f} ms ahead",
        j.matched, static_cast<double>(j.offset_ns) / 1e6);
  } else {
    j.note = "no allocation of the trace matches one of the snapshot's (record the trace with profile_memory=True): "
             "the two clocks are taken as equal";
  }
  // Attribution.
  std::vector<std::pair<int64_t, int64_t>> step_spans;  // absolute [start, end)
  std::vector<int64_t> step_numbers;
  for (uint32_t row : store.step_rows) {
    const std::string_view name = store.strings.get(store.events.name[row]);
    int64_t n = -1;
    if (name.starts_with("ProfilerStep#")) {
      n = 0;
      for (char c : name.substr(13)) {
        if (c < '0' || c > '9') break;
        n = n * 10 + (c - '0');
      }
    }
    const int64_t a = store.meta.base_time_ns + store.events.ts_ns[row];
    step_spans.push_back({a, a + store.events.dur_ns[row]});
    step_numbers.push_back(n);
  }
  std::vector<StepAllocations> per_step(step_spans.size());
  for (size_t k = 0; k < per_step.size(); ++k) per_step[k].step = step_numbers[k];
  int64_t lo_ns = INT64_MAX, hi_ns = INT64_MIN;
  for (size_t i = 0; i < store.events.size(); ++i) {
    lo_ns = std::min(lo_ns, store.meta.base_time_ns + store.events.ts_ns[i]);
    hi_ns = std::max(hi_ns, store.meta.base_time_ns + store.events.ts_ns[i] + store.events.dur_ns[i]);
  }
  const OpFinder ops(store);
  std::unordered_map<uint32_t, OpAllocations> by_name;  // keyed by the op's interned name
  for (size_t e : rows) {
    const int64_t t = snapshot_time_on_trace(s.trace.time_us[e], j.offset_ns);
    if (t < lo_ns || t > hi_ns) {
      ++j.outside;
      continue;
    }
    ++j.in_trace;
    const TraceAction a = s.trace.action[e];
    auto it = std::upper_bound(step_spans.begin(), step_spans.end(), t,
                               [](int64_t x, const std::pair<int64_t, int64_t>& sp) { return x < sp.first; });
    if (it != step_spans.begin() && t < std::prev(it)->second) {
      StepAllocations& st = per_step[static_cast<size_t>(std::prev(it) - step_spans.begin())];
      ++j.in_steps;
      st.allocs += a == TraceAction::kAlloc;
      st.alloc_bytes += a == TraceAction::kAlloc ? s.trace.size[e] : 0;
      st.frees += a == TraceAction::kFreeCompleted;
      st.segment_allocs += a == TraceAction::kSegmentAlloc;
      st.segment_frees += a == TraceAction::kSegmentFree;
      st.ooms += a == TraceAction::kOom;
    }
    if (a != TraceAction::kAlloc) continue;
    const uint32_t op = ops.at(t);
    if (op == UINT32_MAX) continue;
    OpAllocations& o = by_name[store.events.name[op]];
    if (o.op.empty()) o.op = std::string(store.strings.get(store.events.name[op]));
    ++o.allocs;
    o.alloc_bytes += s.trace.size[e];
  }
  // Steps with nothing in them say nothing; none at all says the files may
  // not be of the same run (or the clocks could not be aligned).
  if (j.in_steps > 0) j.steps = std::move(per_step);
  else
    j.note += "; none of the device's events falls inside a step of the trace: are the files of the same run?";
  for (auto& [name, o] : by_name) j.ops.push_back(std::move(o));
  std::sort(j.ops.begin(), j.ops.end(), [](const OpAllocations& a, const OpAllocations& b) {
    return a.alloc_bytes != b.alloc_bytes ? a.alloc_bytes > b.alloc_bytes : a.op < b.op;
  });
  if (j.ops.size() > top_ops) j.ops.resize(top_ops);
  return j;
}

}  // namespace stepscope::memory
