#include "trace/store_builder.h"

#include <algorithm>
#include <bit>
#include <numeric>
#include <tuple>

namespace stepscope::trace {

void StoreBuilder::stage_int_arg(StringId key, int64_t v) {
  auto& a = store_.args;
  a.key.push_back(key);
  a.type.push_back(ArgType::kInt);
  a.value.push_back(v);
}

void StoreBuilder::stage_double_arg(StringId key, double v) {
  auto& a = store_.args;
  a.key.push_back(key);
  a.type.push_back(ArgType::kDouble);
  a.value.push_back(std::bit_cast<int64_t>(v));
}

void StoreBuilder::stage_string_arg(StringId key, StringId v, ArgType type) {
  auto& a = store_.args;
  a.key.push_back(key);
  a.type.push_back(type);
  a.value.push_back(static_cast<int64_t>(v));
}

void StoreBuilder::discard_staged_args() {
  auto& a = store_.args;
  a.key.resize(staged_from_);
  a.type.resize(staged_from_);
  a.value.resize(staged_from_);
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
  e.args_begin.reserve(events + 1);
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

// Reorders columns through one scratch buffer per element type: the buffer a
// column gives up becomes the scratch of the next column of that type, so a
// sort allocates one extra column per type instead of one per column (the
// store's peak memory is reached here, on the largest rank).
class Permuter {
 public:
  explicit Permuter(const std::vector<uint32_t>& order) : order_(order) {}

  template <typename T>
  void operator()(std::vector<T>& v) {
    std::vector<T>& scratch = std::get<std::vector<T>>(scratch_);
    scratch.resize(order_.size());
    for (size_t i = 0; i < order_.size(); ++i) scratch[i] = v[order_[i]];
    v.swap(scratch);
  }

 private:
  const std::vector<uint32_t>& order_;
  std::tuple<std::vector<int64_t>, std::vector<uint32_t>, std::vector<int32_t>, std::vector<uint8_t>,
             std::vector<EventKind>, std::vector<ArgType>>
      scratch_;
};

}  // namespace

void StoreBuilder::finish() {
  discard_staged_args();  // arguments staged for a record that was never added
  auto& e = store_.events;
  auto& a = store_.args;
  const size_t n = e.size();
  bool sorted = std::is_sorted(e.ts_ns.begin(), e.ts_ns.end());
  if (!sorted) {
    // Stable by start time: (ts, row) pairs sorted in one contiguous array
    // (an index sort through the ts column misses the cache per comparison).
    std::vector<std::pair<int64_t, uint32_t>> keyed(n);
    for (size_t i = 0; i < n; ++i) keyed[i] = {e.ts_ns[i], static_cast<uint32_t>(i)};
    std::sort(keyed.begin(), keyed.end());
    std::vector<uint32_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = keyed[i].second;
    keyed = {};
    // The argument rows in the new event order: event i's arguments are the
    // CSR range [args_begin[i], args_begin[i + 1]) (the last one ends at a.size()).
    std::vector<uint32_t> arg_order;
    arg_order.reserve(a.size());
    std::vector<uint32_t> begins(n);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t old = order[i];
      const uint32_t end = old + 1 < n ? e.args_begin[old + 1] : static_cast<uint32_t>(a.size());
      begins[i] = static_cast<uint32_t>(arg_order.size());
      for (uint32_t k = e.args_begin[old]; k < end; ++k) arg_order.push_back(k);
    }
    {
      Permuter permute(order);
      permute(e.ts_ns);
      permute(e.dur_ns);
      permute(e.name);
      permute(e.category);
      permute(e.kind);
      permute(e.pid);
      permute(e.tid);
      permute(e.stream);
      permute(e.flags);
      permute(e.seq);
      permute(e.device);
      permute(e.correlation);
      permute(e.external_id);
    }
    std::vector<uint32_t>().swap(order);  // not needed for the arguments: free it first
    {
      Permuter permute(arg_order);
      permute(a.key);
      permute(a.type);
      permute(a.value);
    }
    e.args_begin = std::move(begins);
  }
  e.args_begin.push_back(static_cast<uint32_t>(a.size()));  // sentinel: end of the last range
  store_.build_indexes();
}

}  // namespace stepscope::trace
