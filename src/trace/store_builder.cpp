#include "trace/store_builder.h"

#include <algorithm>
#include <bit>
#include <memory>
#include <numeric>
#include <type_traits>

#include "trace/radix_sort.h"

namespace stepscope::trace {

bool StoreBuilder::can_stage_arg(StringId key) {
  if (store_.args.size() - staged_from_ < kMaxArgsPerEvent && key <= UINT16_MAX) return true;
  store_.stats.add_silent(ImportCounter::kDroppedArgs, 1);
  return false;
}

void StoreBuilder::stage_int_arg(StringId key, int64_t v) {
  if (!can_stage_arg(key)) return;
  auto& a = store_.args;
  a.key.push_back(static_cast<uint16_t>(key));
  a.type.push_back(ArgType::kInt);
  a.value.push_back(v);
}

void StoreBuilder::stage_double_arg(StringId key, double v) {
  if (!can_stage_arg(key)) return;
  auto& a = store_.args;
  a.key.push_back(static_cast<uint16_t>(key));
  a.type.push_back(ArgType::kDouble);
  a.value.push_back(std::bit_cast<int64_t>(v));
}

void StoreBuilder::stage_string_arg(StringId key, StringId v, ArgType type) {
  if (!can_stage_arg(key)) return;
  auto& a = store_.args;
  a.key.push_back(static_cast<uint16_t>(key));
  a.type.push_back(type);
  a.value.push_back(static_cast<int64_t>(v));
}

std::vector<StoreBuilder::StagedArg> StoreBuilder::take_staged_args() {
  std::vector<StagedArg> out;
  const auto& a = store_.args;
  for (size_t i = staged_from_; i < a.size(); ++i) out.push_back({a.key[i], a.type[i], a.value[i]});
  discard_staged_args();
  return out;
}

void StoreBuilder::restage_args(const std::vector<StagedArg>& args) {
  for (const StagedArg& x : args) {
    if (!can_stage_arg(x.key)) return;
    auto& a = store_.args;
    a.key.push_back(x.key);
    a.type.push_back(x.type);
    a.value.push_back(x.value);
  }
}

void StoreBuilder::drop_staged_args() {
  auto& a = store_.args;
  a.key.resize(staged_from_);
  a.type.resize(staged_from_);
  a.value.truncate(staged_from_);
}

void StoreBuilder::add_event(const EventRow& r) {
  auto& e = store_.events;
  e.ts_ns.push_back(r.ts_ns);
  e.dur_ns.push_back(r.dur_ns);
  e.name.push_back(r.name);
  e.category.push_back(r.category);
  e.kind.push_back(r.kind);
  e.pid.push_back(r.pid);
  e.tid.push_back(r.tid);
  e.stream.push_back(r.stream);
  e.flags.push_back(r.flags);
  e.seq.push_back(r.seq);
  e.device.push_back(r.device);
  e.correlation.push_back(r.correlation);
  e.external_id.push_back(r.external_id);
  e.args_begin.push_back(static_cast<uint32_t>(staged_from_));
  e.args_count.push_back(static_cast<uint8_t>(store_.args.size() - staged_from_));
  staged_from_ = store_.args.size();
}

void StoreBuilder::reserve(size_t events, size_t args, size_t flows) {
  auto& e = store_.events;
  e.ts_ns.reserve(events);
  e.dur_ns.reserve(events);
  e.name.reserve(events);
  e.category.reserve(events);
  e.kind.reserve(events);
  e.pid.reserve(events);
  e.tid.reserve(events);
  e.stream.reserve(events);
  e.flags.reserve(events);
  e.seq.reserve(events);
  e.device.reserve(events);
  e.correlation.reserve(events);
  e.external_id.reserve(events);
  e.args_begin.reserve(events);
  e.args_count.reserve(events);
  auto& a = store_.args;
  a.key.reserve(args);
  a.type.reserve(args);
  a.value.reserve(args);
  auto& f = store_.flows;
  f.id.reserve(flows);
  f.category.reserve(flows);
  f.phase.reserve(flows);
  f.ts_ns.reserve(flows);
  f.pid.reserve(flows);
  f.tid.reserve(flows);
}

void StoreBuilder::add_flow(int64_t id, StringId category, char phase, int64_t ts_ns, int32_t pid,
                            int64_t tid) {
  auto& f = store_.flows;
  f.id.push_back(id);
  f.category.push_back(category);
  f.phase.push_back(phase);
  f.ts_ns.push_back(ts_ns);
  f.pid.push_back(pid);
  f.tid.push_back(tid);
}

namespace {

// Reorders columns through one scratch buffer of 8 bytes per row, shared by
// every column whatever its element type: the sort's extra memory is one
// 8-byte column plus the order, reached on the largest rank.
class Permuter {
 public:
  explicit Permuter(const std::vector<uint32_t>& order)
      : order_(order), scratch_(std::make_unique_for_overwrite<int64_t[]>(order.size())) {}

  template <typename T>
  void operator()(std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(int64_t) &&
                  alignof(int64_t) % alignof(T) == 0);
    T* tmp = reinterpret_cast<T*>(scratch_.get());
    for (size_t i = 0; i < order_.size(); ++i) tmp[i] = v[order_[i]];
    std::copy(tmp, tmp + order_.size(), v.begin());
  }

 private:
  const std::vector<uint32_t>& order_;
  std::unique_ptr<int64_t[]> scratch_;
};

// The stable time order of rows. When start offset and row index fit in 64
// bits together (any trace shorter than ~2^(64 - log2 rows) ns, i.e. hours),
// one packed key per row is sorted: 8 bytes instead of a 16-byte (ts, row)
// pair, which sets the sort's peak memory. Either way the sort is stable on
// the start alone, so ties keep file order.
std::vector<uint32_t> time_order(const std::vector<int64_t>& ts) {
  const size_t n = ts.size();
  const auto [lo, hi] = std::minmax_element(ts.begin(), ts.end());
  const uint64_t base = static_cast<uint64_t>(*lo);
  const uint64_t span = static_cast<uint64_t>(*hi) - base;
  const int row_bits = std::bit_width(n);
  std::vector<uint32_t> order(n);
  if (std::bit_width(span) + row_bits <= 64) {
    std::vector<uint64_t> keys(n);
    for (size_t i = 0; i < n; ++i) keys[i] = ((static_cast<uint64_t>(ts[i]) - base) << row_bits) | i;
    stable_radix_sort(keys, [](uint64_t k) { return k; }, row_bits);
    const uint64_t row_mask = (uint64_t{1} << row_bits) - 1;
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(keys[i] & row_mask);
    return order;
  }
  struct Keyed {
    uint64_t offset;
    uint32_t row;
  };
  std::vector<Keyed> keyed(n);
  for (size_t i = 0; i < n; ++i) keyed[i] = {static_cast<uint64_t>(ts[i]) - base, static_cast<uint32_t>(i)};
  stable_radix_sort(keyed, [](const Keyed& k) { return k.offset; });
  for (size_t i = 0; i < n; ++i) order[i] = keyed[i].row;
  return order;
}

}  // namespace

void StoreBuilder::finish() {
  discard_staged_args();  // arguments staged for a record that was never added
  auto& e = store_.events;
  if (!std::is_sorted(e.ts_ns.begin(), e.ts_ns.end())) {
    // Stable by start time; the argument table is not moved (each event
    // keeps its begin/count into it).
    const std::vector<uint32_t> order = time_order(e.ts_ns);
    Permuter permute(order);
    permute(e.ts_ns);
    permute(e.dur_ns.codes());
    permute(e.name);
    permute(e.category);
    permute(e.kind);
    permute(e.pid);
    permute(e.tid.codes());
    permute(e.stream.codes());
    permute(e.flags);
    permute(e.seq);
    permute(e.device);
    permute(e.correlation.codes());
    permute(e.external_id.codes());
    permute(e.args_begin);
    permute(e.args_count);
  }
  store_.build_indexes();
}

}  // namespace stepscope::trace
