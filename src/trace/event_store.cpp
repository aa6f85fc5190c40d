#include "trace/event_store.h"

#include <algorithm>
#include <bit>
#include <unordered_map>

namespace stepscope::trace {

namespace {
template <typename F>
auto find_arg(const EventStore& s, size_t i, StringId key, F&& get) -> decltype(get(size_t{})) {
  if (key == StringTable::kMissing || i + 1 >= s.events.args_begin.size()) return std::nullopt;
  for (uint32_t k = s.events.args_begin[i]; k < s.events.args_begin[i + 1]; ++k) {
    if (s.args.key[k] == key) return get(k);
  }
  return std::nullopt;
}
}  // namespace

std::optional<int64_t> EventStore::arg_int(size_t i, StringId key) const {
  return find_arg(*this, i, key, [&](size_t k) -> std::optional<int64_t> {
    if (args.type[k] == ArgType::kInt) return args.int_value[k];
    return std::nullopt;
  });
}

std::optional<double> EventStore::arg_number(size_t i, StringId key) const {
  return find_arg(*this, i, key, [&](size_t k) -> std::optional<double> {
    if (args.type[k] == ArgType::kInt) return static_cast<double>(args.int_value[k]);
    if (args.type[k] == ArgType::kDouble) return std::bit_cast<double>(args.int_value[k]);
    return std::nullopt;
  });
}

std::optional<std::string_view> EventStore::arg_string(size_t i, StringId key) const {
  return find_arg(*this, i, key, [&](size_t k) -> std::optional<std::string_view> {
    if (args.type[k] == ArgType::kString || args.type[k] == ArgType::kJson)
      return strings.get(args.string_value[k]);
    return std::nullopt;
  });
}

void EventStore::build_indexes() {
  gpu_rows.clear();
  runtime_rows.clear();
  cpu_op_rows.clear();
  step_rows.clear();
  const size_t n = events.size();
  for (size_t i = 0; i < n; ++i) {
    EventKind k = events.kind[i];
    if (is_gpu_work(k)) {
      gpu_rows.push_back(static_cast<uint32_t>(i));
    } else if (k == EventKind::kRuntime) {
      runtime_rows.push_back(static_cast<uint32_t>(i));
    } else if (k == EventKind::kCpuOp) {
      cpu_op_rows.push_back(static_cast<uint32_t>(i));
    } else if (k == EventKind::kUserAnnotation && name_of(i).starts_with("ProfilerStep#")) {
      step_rows.push_back(static_cast<uint32_t>(i));
    }
  }
  // correlation -> runtime row. A correlation id is unique per launch within a
  // rank; if a trace repeats one, the first launch wins.
  std::unordered_map<int64_t, uint32_t> launch_by_corr;
  launch_by_corr.reserve(runtime_rows.size());
  for (uint32_t r : runtime_rows) {
    if (events.correlation[r] != kNone) launch_by_corr.emplace(events.correlation[r], r);
  }
  // External id -> cpu op row; when nested ops share an id the outermost (first) wins,
  // matching how Kineto assigns one id per top-level op.
  std::unordered_map<int64_t, uint32_t> op_by_ext;
  op_by_ext.reserve(cpu_op_rows.size());
  for (uint32_t r : cpu_op_rows) {
    if (events.external_id[r] != kNone) op_by_ext.emplace(events.external_id[r], r);
  }
  launch_of_gpu.assign(gpu_rows.size(), kNoRow);
  cpu_op_of_gpu.assign(gpu_rows.size(), kNoRow);
  for (size_t g = 0; g < gpu_rows.size(); ++g) {
    uint32_t row = gpu_rows[g];
    if (events.correlation[row] != kNone) {
      auto it = launch_by_corr.find(events.correlation[row]);
      if (it != launch_by_corr.end()) launch_of_gpu[g] = it->second;
    }
    int64_t ext = events.external_id[row];
    if (ext == kNone && launch_of_gpu[g] != kNoRow) ext = events.external_id[launch_of_gpu[g]];
    if (ext != kNone) {
      auto it = op_by_ext.find(ext);
      // Traces of 2021-2023 number GPU rows' External id like their correlation,
      // so an op with the same number can be an unrelated op: accept it only if
      // it encloses the launch call on the launching thread.
      uint32_t launch = launch_of_gpu[g];
      if (it != op_by_ext.end() &&
          (launch == kNoRow || (events.tid[it->second] == events.tid[launch] &&
                                events.ts_ns[it->second] <= events.ts_ns[launch] &&
                                events.ts_ns[launch] <= events.ts_ns[it->second] + events.dur_ns[it->second])))
        cpu_op_of_gpu[g] = it->second;
    }
  }
}

}  // namespace stepscope::trace
