#include "diagnose/host_tree.h"

#include <algorithm>
#include <tuple>

namespace stepscope::diagnose {

bool is_host_row(trace::EventKind k) {
  return k == trace::EventKind::kCpuOp || k == trace::EventKind::kUserAnnotation ||
         k == trace::EventKind::kPythonFunction || k == trace::EventKind::kRuntime;
}

HostTree::HostTree(const trace::EventStore& store) {
  const auto& ev = store.events;
  const size_t n = ev.size();
  parent_.assign(n, kNoRow);
  // Per thread by start; an enclosing span sorts before what it encloses
  // (same start: longer first). Runtime calls are leaves, so on a tie with an
  // op of equal length the op goes first. The keys are packed into one array
  // first: sorting row numbers through five columns was the largest single
  // cost of diagnosis on big traces (a cache miss per column per comparison).
  auto end_of = [&](uint32_t r) { return ev.ts_ns[r] + std::max<int64_t>(ev.dur_ns[r], 0); };
  struct Key {
    int32_t pid;
    int64_t tid, ts, neg_end;
    bool runtime;
    uint32_t row;
    bool operator<(const Key& o) const {
      return std::tie(pid, tid, ts, neg_end, runtime, row) < std::tie(o.pid, o.tid, o.ts, o.neg_end, o.runtime, o.row);
    }
  };
  std::vector<Key> keys;
  for (uint32_t r = 0; r < n; ++r)
    if (is_host_row(ev.kind[r]))
      keys.push_back({ev.pid[r], ev.tid[r], ev.ts_ns[r], -end_of(r), ev.kind[r] == trace::EventKind::kRuntime, r});
  std::sort(keys.begin(), keys.end());
  std::vector<uint32_t> rows(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) rows[i] = keys[i].row;
  keys = {};
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
  // Children in CSR form, in the sorted (time) order.
  child_begin_.assign(n + 1, 0);
  for (uint32_t r : rows)
    if (parent_[r] != kNoRow) ++child_begin_[parent_[r] + 1];
  for (size_t i = 0; i < n; ++i) child_begin_[i + 1] += child_begin_[i];
  child_rows_.resize(child_begin_[n]);
  std::vector<uint32_t> fill(child_begin_.begin(), child_begin_.end() - 1);
  position_.assign(n, kNoRow);
  for (uint32_t r : rows) {
    if (parent_[r] == kNoRow) continue;
    uint32_t p = parent_[r];
    position_[r] = fill[p] - child_begin_[p];
    child_rows_[fill[p]++] = r;
  }
  for (uint32_t i = 0; i < roots_.size(); ++i) position_[roots_[i]] = i;
}

std::span<const uint32_t> HostTree::siblings(uint32_t row) const {
  uint32_t p = parent(row);
  return p == kNoRow ? std::span<const uint32_t>(roots_) : children(p);
}

std::span<const uint32_t> HostTree::children(uint32_t row) const {
  if (row + 1 >= child_begin_.size()) return {};
  return {child_rows_.data() + child_begin_[row], child_begin_[row + 1] - child_begin_[row]};
}

}  // namespace stepscope::diagnose
