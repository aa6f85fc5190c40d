#include "trace/event_store.h"

#include <algorithm>
#include <bit>
#include <string>

#include "trace/radix_sort.h"

namespace stepscope::trace {

namespace {
// Key -> the first row (in `rows` order) holding it, for the joins (or, with
// `unique`, the only row: a key held by several rows finds none). A sorted
// flat array rather than a hash map: 16 bytes per row in one allocation, so
// building the joins of a large rank neither fragments the heap with
// millions of nodes nor keeps them resident after they are freed.
class FirstRowByKey {
 public:
  FirstRowByKey(const std::vector<uint32_t>& rows, const CompactInt64Column& key, bool unique = false) {
    entries_.reserve(rows.size());
    for (uint32_t r : rows)
      if (key[r] != kNone) entries_.push_back({key[r], r});
    // Stable: among equal keys the first row stays first. The sign bit is
    // flipped so that unsigned order is the keys' signed order.
    stable_radix_sort(entries_, [](const Entry& e) { return static_cast<uint64_t>(e.key) ^ (uint64_t{1} << 63); });
    if (!unique) return;
    // Rows after the first of a key are counted; every row of such a key is
    // marked so that find() returns none for it.
    for (size_t i = 1; i < entries_.size(); ++i)
      if (entries_[i].key == entries_[i - 1].key) {
        if (repeated_rows_ == 0) first_repeated_key_ = entries_[i].key;
        ++repeated_rows_;
        entries_[i].row = entries_[i - 1].row = EventStore::kNoRow;
      }
  }
  uint64_t repeated_rows() const { return repeated_rows_; }
  int64_t first_repeated_key() const { return first_repeated_key_; }
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
  uint64_t repeated_rows_ = 0;
  int64_t first_repeated_key_ = 0;
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
  // correlation -> runtime row. CUPTI gives every runtime/driver call its own
  // correlation id, and one call may start several GPU activities (a graph
  // launch starts all its kernels). Runtime calls sharing an id are not a
  // trace CUPTI writes: which one launched the activities is unknown, so
  // they are joined to none (never all to the first) and counted.
  FirstRowByKey launch_by_corr(runtime_rows, events.correlation, /*unique=*/true);
  if (const uint64_t n = launch_by_corr.repeated_rows()) {
    stats.add(ImportCounter::kAmbiguousCorrelation, 0,
              "correlation id " + std::to_string(launch_by_corr.first_repeated_key()) +
                  " is shared by several runtime calls (no byte offset: found after reading)");
    if (n > 1) stats.add_silent(ImportCounter::kAmbiguousCorrelation, n - 1);
  }
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
