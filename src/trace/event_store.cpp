#include "trace/event_store.h"

#include <algorithm>
#include <bit>

#include "trace/radix_sort.h"

namespace stepscope::trace {

namespace {
// Key -> the first row (in `rows` order) holding it, for the joins. A sorted
// flat array rather than a hash map: 16 bytes per row in one allocation, so
// building the joins of a large rank neither fragments the heap with
// millions of nodes nor keeps them resident after they are freed.
class FirstRowByKey {
 public:
  FirstRowByKey(const std::vector<uint32_t>& rows, const CompactInt64Column& key) {
    entries_.reserve(rows.size());
    for (uint32_t r : rows)
      if (key[r] != kNone) entries_.push_back({key[r], r});
    // Stable: among equal keys the first row stays first. The sign bit is
    // flipped so that unsigned order is the keys' signed order.
    stable_radix_sort(entries_, [](const Entry& e) { return static_cast<uint64_t>(e.key) ^ (uint64_t{1} << 63); });
  }
  // The row, or EventStore::kNoRow.
  uint32_t find(int64_t key) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                               [](const Entry& e, int64_t k) { return e.key < k; });
    return it != entries_.end() && it->key == key ? it->row : EventStore::kNoRow;
  }

 private:
  struct Entry {
    int64_t key;
    uint32_t row;
  };
  std::vector<Entry> entries_;
};

template <typename F>
auto find_arg(const EventStore& s, size_t i, StringId key, F&& get) -> decltype(get(size_t{})) {
  if (key == StringTable::kMissing || i >= s.events.size()) return std::nullopt;
  const EventStore::ArgRows rows = s.arg_rows(i);
  for (uint32_t k = rows.first; k < rows.last; ++k) {
    if (s.args.key[k] == key) return get(k);
  }
  return std::nullopt;
}
}  // namespace

std::optional<int64_t> EventStore::arg_int(size_t i, StringId key) const {
  return find_arg(*this, i, key, [&](size_t k) -> std::optional<int64_t> {
    if (args.type[k] == ArgType::kInt) return args.value[k];
    return std::nullopt;
  });
}

std::optional<double> EventStore::arg_number(size_t i, StringId key) const {
  return find_arg(*this, i, key, [&](size_t k) -> std::optional<double> {
    if (args.type[k] == ArgType::kInt) return static_cast<double>(args.value[k]);
    if (args.type[k] == ArgType::kDouble) return std::bit_cast<double>(args.value[k]);
    return std::nullopt;
  });
}

std::optional<std::string_view> EventStore::arg_string(size_t i, StringId key) const {
  return find_arg(*this, i, key, [&](size_t k) -> std::optional<std::string_view> {
    if (args.type[k] == ArgType::kString || args.type[k] == ArgType::kJson)
      return strings.get(static_cast<StringId>(args.value[k]));
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
  FirstRowByKey launch_by_corr(runtime_rows, events.correlation);
  // External id -> cpu op row; when nested ops share an id the outermost (first) wins,
  // matching how Kineto assigns one id per top-level op.
  FirstRowByKey op_by_ext(cpu_op_rows, events.external_id);
  launch_of_gpu.assign(gpu_rows.size(), kNoRow);
  cpu_op_of_gpu.assign(gpu_rows.size(), kNoRow);
  for (size_t g = 0; g < gpu_rows.size(); ++g) {
    uint32_t row = gpu_rows[g];
    if (events.correlation[row] != kNone) {
      launch_of_gpu[g] = launch_by_corr.find(events.correlation[row]);
    }
    int64_t ext = events.external_id[row];
    if (ext == kNone && launch_of_gpu[g] != kNoRow) ext = events.external_id[launch_of_gpu[g]];
    if (ext != kNone) {
      const uint32_t op = op_by_ext.find(ext);
      // Traces of 2021-2023 number GPU rows' External id like their correlation,
      // so an op with the same number can be an unrelated op: accept it only if
      // it encloses the launch call on the launching thread.
      uint32_t launch = launch_of_gpu[g];
      if (op != kNoRow &&
          (launch == kNoRow || (events.tid[op] == events.tid[launch] &&
                                events.ts_ns[op] <= events.ts_ns[launch] &&
                                events.ts_ns[launch] <= events.ts_ns[op] + events.dur_ns[op])))
        cpu_op_of_gpu[g] = op;
    }
  }
}

}  // namespace stepscope::trace
