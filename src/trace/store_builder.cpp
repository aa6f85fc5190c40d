#include "trace/store_builder.h"

#include <algorithm>
#include <numeric>

namespace stepscope::trace {

void StoreBuilder::stage_int_arg(StringId key, int64_t v) {
  auto& a = store_.args;
  a.key.push_back(key);
  a.type.push_back(ArgType::kInt);
  a.int_value.push_back(v);
  a.double_value.push_back(static_cast<double>(v));
  a.string_value.push_back(0);
}

void StoreBuilder::stage_double_arg(StringId key, double v) {
  auto& a = store_.args;
  a.key.push_back(key);
  a.type.push_back(ArgType::kDouble);
  a.int_value.push_back(0);
  a.double_value.push_back(v);
  a.string_value.push_back(0);
}

void StoreBuilder::stage_string_arg(StringId key, StringId v, ArgType type) {
  auto& a = store_.args;
  a.key.push_back(key);
  a.type.push_back(type);
  a.int_value.push_back(0);
  a.double_value.push_back(0);
  a.string_value.push_back(v);
}

void StoreBuilder::discard_staged_args() {
  auto& a = store_.args;
  a.key.resize(staged_from_);
  a.type.resize(staged_from_);
  a.int_value.resize(staged_from_);
  a.double_value.resize(staged_from_);
  a.string_value.resize(staged_from_);
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
  e.device.push_back(r.device);
  e.correlation.push_back(r.correlation);
  e.external_id.push_back(r.external_id);
  e.args_begin.push_back(static_cast<uint32_t>(staged_from_));
  staged_from_ = store_.args.size();
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

template <typename T>
void permute(std::vector<T>& v, const std::vector<uint32_t>& order) {
  std::vector<T> out(v.size());
  for (size_t i = 0; i < order.size(); ++i) out[i] = v[order[i]];
  v.swap(out);
}

}  // namespace

void StoreBuilder::finish() {
  discard_staged_args();  // arguments staged for a record that was never added
  auto& e = store_.events;
  auto& a = store_.args;
  const size_t n = e.size();
  // Close the CSR ranges: args of event i are [args_begin[i], args_end(i)).
  std::vector<uint32_t> arg_end(n);
  for (size_t i = 0; i < n; ++i)
    arg_end[i] = i + 1 < n ? e.args_begin[i + 1] : static_cast<uint32_t>(a.size());

  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  bool sorted = std::is_sorted(e.ts_ns.begin(), e.ts_ns.end());
  if (!sorted) {
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t x, uint32_t y) { return e.ts_ns[x] < e.ts_ns[y]; });
    permute(e.ts_ns, order);
    permute(e.dur_ns, order);
    permute(e.name, order);
    permute(e.category, order);
    permute(e.kind, order);
    permute(e.pid, order);
    permute(e.tid, order);
    permute(e.stream, order);
    permute(e.device, order);
    permute(e.correlation, order);
    permute(e.external_id, order);
    // Rebuild the argument table in the new event order.
    ArgColumns sorted_args;
    std::vector<uint32_t> begins(n);
    for (size_t i = 0; i < n; ++i) {
      uint32_t old = order[i];
      begins[i] = static_cast<uint32_t>(sorted_args.size());
      for (uint32_t k = e.args_begin[old]; k < arg_end[old]; ++k) {
        sorted_args.key.push_back(a.key[k]);
        sorted_args.type.push_back(a.type[k]);
        sorted_args.int_value.push_back(a.int_value[k]);
        sorted_args.double_value.push_back(a.double_value[k]);
        sorted_args.string_value.push_back(a.string_value[k]);
      }
    }
    a = std::move(sorted_args);
    e.args_begin = std::move(begins);
  }
  e.args_begin.push_back(static_cast<uint32_t>(a.size()));  // sentinel: end of the last range
  store_.build_indexes();
}

}  // namespace stepscope::trace
