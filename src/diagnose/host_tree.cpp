#include "diagnose/host_tree.h"

#include <algorithm>
#include <tuple>

namespace stepscope::diagnose {

bool is_host_row(trace::EventKind k) {
  return k == trace::EventKind::kCpuOp || k == trace::EventKind::kUserAnnotation ||
         k == trace::EventKind::kPythonFunction || k == trace::EventKind::kRuntime;
}

namespace {

// Host rows grouped by thread ((pid, tid) ascending), each thread's rows by
// start, an enclosing span before what it encloses (same start: longer
// first; runtime calls are leaves, so on a tie with an op of equal length
// the op goes first), then by row. The store is already in (start, file
// order), so a stable counting sort by thread does most of the work and only
// runs of equal start need a comparison sort: the extra memory is the row
// list itself, where sorting packed keys for every host row cost ~40 bytes
// per row (the largest transient of diagnosis, docs/performance.md).
std::vector<uint32_t> host_rows_in_tree_order(const trace::EventColumns& ev) {
  const size_t n = ev.size();
  // The distinct threads, sorted. Rows of one thread come in runs, so only a
  // change of thread is listed, and the list is made unique whenever it
  // doubles: a few entries per thread instead of one per host row.
  std::vector<std::pair<int32_t, int64_t>> threads;
  auto make_unique = [&threads] {
    std::sort(threads.begin(), threads.end());
    threads.erase(std::unique(threads.begin(), threads.end()), threads.end());
  };
  size_t unique_limit = 1024;
  for (size_t r = 0; r < n; ++r) {
    if (!is_host_row(ev.kind[r])) continue;
    const std::pair<int32_t, int64_t> key{ev.pid[r], ev.tid[r]};
    if (!threads.empty() && threads.back() == key) continue;
    threads.push_back(key);
    if (threads.size() >= unique_limit) {
      make_unique();
      unique_limit = std::max<size_t>(1024, 2 * threads.size());
    }
  }
  make_unique();
  threads.shrink_to_fit();
  std::pair<int32_t, int64_t> last{};
  uint32_t last_index = 0;
  bool have_last = false;
  auto thread_of = [&](size_t r) {
    const std::pair<int32_t, int64_t> key{ev.pid[r], ev.tid[r]};
    if (!have_last || key != last) {
      last = key;
      last_index = static_cast<uint32_t>(std::lower_bound(threads.begin(), threads.end(), key) - threads.begin());
      have_last = true;
    }
    return last_index;
  };
  std::vector<uint32_t> offset(threads.size() + 1, 0);
  for (size_t r = 0; r < n; ++r)
    if (is_host_row(ev.kind[r])) ++offset[thread_of(r) + 1];
  for (size_t t = 0; t < threads.size(); ++t) offset[t + 1] += offset[t];
  std::vector<uint32_t> rows(offset.back());
  for (size_t r = 0; r < n; ++r)
    if (is_host_row(ev.kind[r])) rows[offset[thread_of(r)]++] = static_cast<uint32_t>(r);

  auto end_of = [&](uint32_t r) { return ev.ts_ns[r] + std::max<int64_t>(ev.dur_ns[r], 0); };
  auto encloses_first = [&](uint32_t a, uint32_t b) {
    const bool ra = ev.kind[a] == trace::EventKind::kRuntime, rb = ev.kind[b] == trace::EventKind::kRuntime;
    return std::tuple(ev.ts_ns[a], -end_of(a), ra, a) < std::tuple(ev.ts_ns[b], -end_of(b), rb, b);
  };
  if (!std::is_sorted(ev.ts_ns.begin(), ev.ts_ns.end())) {
    // A store that skipped StoreBuilder::finish: sort each thread whole.
    for (size_t t = 0; t < threads.size(); ++t)
      std::sort(rows.begin() + (t == 0 ? 0 : offset[t - 1]), rows.begin() + offset[t], encloses_first);
    return rows;
  }
  for (size_t i = 0; i < rows.size();) {
    size_t j = i + 1;
    while (j < rows.size() && ev.ts_ns[rows[j]] == ev.ts_ns[rows[i]] && ev.pid[rows[j]] == ev.pid[rows[i]] &&
           ev.tid[rows[j]] == ev.tid[rows[i]])
      ++j;
    if (j - i > 1) std::sort(rows.begin() + i, rows.begin() + j, encloses_first);
    i = j;
  }
  return rows;
}

}  // namespace

HostTree::HostTree(const trace::EventStore& store) : events_(&store.events) {
  const auto& ev = store.events;
  const size_t n = ev.size();
  parent_.assign(n, kNoRow);
  auto end_of = [&](uint32_t r) { return ev.ts_ns[r] + std::max<int64_t>(ev.dur_ns[r], 0); };
  const std::vector<uint32_t> rows = host_rows_in_tree_order(ev);
  std::vector<uint32_t> stack;
  int32_t cur_pid = 0;
  int64_t cur_tid = 0;
  for (uint32_t r : rows) {
    if (stack.empty() || ev.pid[r] != cur_pid || ev.tid[r] != cur_tid) {
      stack.clear();
      cur_pid = ev.pid[r];
      cur_tid = ev.tid[r];
    }
    // Pop spans that ended before this one starts or cannot hold it whole
    // (a partial overlap is a recording artefact: treat as a sibling).
    while (!stack.empty() && end_of(stack.back()) < end_of(r)) stack.pop_back();
    if (!stack.empty()) parent_[r] = stack.back();
    else roots_.push_back(r);
    // Runtime calls hold nothing.
    if (ev.kind[r] != trace::EventKind::kRuntime) stack.push_back(r);
  }
  // Children grouped by parent row (ascending), each group in the sorted
  // (time) order: a counting sort by parent. The offsets are dropped after
  // it: children() finds a group by binary search on parent_, which saves 4
  // bytes per event row for the rest of the diagnosis.
  std::vector<uint32_t> fill(n + 1, 0);
  for (uint32_t r : rows)
    if (parent_[r] != kNoRow) ++fill[parent_[r] + 1];
  for (size_t i = 0; i < n; ++i) fill[i + 1] += fill[i];
  child_rows_.resize(fill[n]);
  for (uint32_t r : rows)
    if (parent_[r] != kNoRow) child_rows_[fill[parent_[r]]++] = r;
}

// Siblings are in tree order (pid, tid, start, longer first, op before
// runtime call, row), so the row is found by binary search rather than kept
// in a per-row position column (4 bytes per event for one detector's use).
uint32_t HostTree::sibling_index(uint32_t row) const {
  if (row >= parent_.size() || !is_host_row(events_->kind[row])) return kNoRow;
  const trace::EventColumns& ev = *events_;
  auto key = [&](uint32_t r) {
    return std::tuple(ev.pid[r], ev.tid[r], ev.ts_ns[r], -(ev.ts_ns[r] + std::max<int64_t>(ev.dur_ns[r], 0)),
                      ev.kind[r] == trace::EventKind::kRuntime, r);
  };
  const std::span<const uint32_t> sib = siblings(row);
  const auto it = std::lower_bound(sib.begin(), sib.end(), row,
                                   [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  return it != sib.end() && *it == row ? static_cast<uint32_t>(it - sib.begin()) : kNoRow;
}

std::span<const uint32_t> HostTree::siblings(uint32_t row) const {
  uint32_t p = parent(row);
  return p == kNoRow ? std::span<const uint32_t>(roots_) : children(p);
}

std::span<const uint32_t> HostTree::children(uint32_t row) const {
  if (row >= parent_.size()) return {};
  const auto first = std::partition_point(child_rows_.begin(), child_rows_.end(),
                                          [&](uint32_t child) { return parent_[child] < row; });
  const auto last = std::partition_point(first, child_rows_.end(), [&](uint32_t child) { return parent_[child] == row; });
  return {child_rows_.data() + (first - child_rows_.begin()), static_cast<size_t>(last - first)};
}

}  // namespace stepscope::diagnose
