// How host spans nest: on each (pid, tid), an op, annotation, Python frame or
// runtime call lies inside the innermost span that encloses it in time. The
// trace records no parent links, so this tree is rebuilt from the times once
// per rank; detectors use it to find what called a sync (aten::item under a
// user's code) or which ops are siblings (q/k/v projections in one module).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trace/event_store.h"

namespace stepscope::diagnose {

class HostTree {
 public:
  explicit HostTree(const trace::EventStore& store);

  static constexpr uint32_t kNoRow = trace::EventStore::kNoRow;

  // Innermost enclosing host span of `row` on the same thread, or kNoRow.
  uint32_t parent(uint32_t row) const { return row < parent_.size() ? parent_[row] : kNoRow; }
  // Host spans directly inside `row`, in time order.
  std::span<const uint32_t> children(uint32_t row) const;
  // Host spans with no parent, in (pid, tid, time) order.
  const std::vector<uint32_t>& roots() const { return roots_; }
  // Position of `row` in children(parent(row)), or in roots() for a root.
  uint32_t sibling_index(uint32_t row) const;
  // The list `row` is in: children(parent(row)) or roots().
  std::span<const uint32_t> siblings(uint32_t row) const;

 private:
  std::vector<uint32_t> parent_;       // per event row
  std::vector<uint32_t> child_rows_;  // children of every host span, grouped by parent row (ascending)
  std::vector<uint32_t> roots_;
  const trace::EventColumns* events_;  // for sibling_index's search (siblings are in tree order)
};

// True for the row kinds the tree holds: CPU ops, user annotations, Python
// frames and runtime calls.
bool is_host_row(trace::EventKind k);

}  // namespace stepscope::diagnose
