#include "trace/snapshot/pickle_value.h"

#include <stdexcept>

namespace stepscope::trace::snapshot {

ValueId ValueArena::make(ValueKind kind) {
  ValueId id;
  if (free_head_ != kNoValue) {
    id = free_head_;
    free_head_ = values_[id].next_free;
    --free_count_;
  } else {
    if (values_.size() >= kNoValue) throw std::length_error("pickle: more than 2^32 live values");
    id = static_cast<ValueId>(values_.size());
    values_.emplace_back();
  }
  Value& v = values_[id];
  v.kind = kind;
  v.handle_kind = 0;
  v.refs = 1;
  v.serial = 0;
  v.i = 0;
  return id;
}

ValueId ValueArena::boolean(bool b) {
  const ValueId id = make(ValueKind::kBool);
  values_[id].i = b ? 1 : 0;
  return id;
}
ValueId ValueArena::integer(int64_t x) {
  const ValueId id = make(ValueKind::kInt);
  values_[id].i = x;
  return id;
}
ValueId ValueArena::unsigned_integer(uint64_t x) {
  if (x <= static_cast<uint64_t>(INT64_MAX)) return integer(static_cast<int64_t>(x));
  const ValueId id = make(ValueKind::kUInt);
  values_[id].u = x;
  return id;
}
ValueId ValueArena::real(double x) {
  const ValueId id = make(ValueKind::kFloat);
  values_[id].f = x;
  return id;
}
ValueId ValueArena::text(std::string_view s) {
  const StringId sid = strings_.intern(s);
  const ValueId id = make(ValueKind::kStr);
  values_[id].str = sid;
  return id;
}
ValueId ValueArena::bytes(std::string_view s) {
  const StringId sid = strings_.intern(s);
  const ValueId id = make(ValueKind::kBytes);
  values_[id].str = sid;
  return id;
}
ValueId ValueArena::container(ValueKind kind) {
  const ValueId id = make(kind);
  uint32_t slot;
  if (!free_lists_.empty()) {
    slot = free_lists_.back();
    free_lists_.pop_back();
  } else {
    slot = static_cast<uint32_t>(lists_.size());
    lists_.emplace_back();
  }
  values_[id].items = slot;
  if (next_serial_ == UINT32_MAX) throw std::length_error("pickle: more than 2^32 containers");
  values_[id].serial = ++next_serial_;
  return id;
}
ValueId ValueArena::handle(uint8_t handle_kind, uint32_t row) {
  const ValueId id = make(ValueKind::kHandle);
  values_[id].handle_kind = handle_kind;
  values_[id].handle = row;
  return id;
}

void ValueArena::clear_payload(ValueId id, std::vector<ValueId>& pending) {
  Value& v = values_[id];
  const ValueKind k = v.kind;
  if (k == ValueKind::kList || k == ValueKind::kTuple || k == ValueKind::kDict || k == ValueKind::kSet) {
    std::vector<ValueId>& list = lists_[v.items];
    pending.insert(pending.end(), list.begin(), list.end());
    std::vector<ValueId>().swap(list);  // give the memory back: lists can be long
    free_lists_.push_back(v.items);
  }
}

void ValueArena::replace_with_handle(ValueId id, uint8_t handle_kind, uint32_t row) {
  std::vector<ValueId> pending;
  clear_payload(id, pending);
  Value& v = values_[id];
  v.kind = ValueKind::kHandle;
  v.handle_kind = handle_kind;
  v.handle = row;
  for (ValueId p : pending) release(p);
}

bool ValueArena::drop(ValueId id) {
  Value& v = values_[id];
  return v.kind != ValueKind::kFree && --v.refs == 0;
}

void ValueArena::release(ValueId id) {
  if (!drop(id)) return;
  // Iterative: a pickle may nest a million lists deep.
  pending_.push_back(id);
  while (!pending_.empty()) {
    const ValueId x = pending_.back();
    pending_.pop_back();
    children_.clear();
    clear_payload(x, children_);
    Value& freed = values_[x];
    freed.kind = ValueKind::kFree;
    freed.next_free = free_head_;
    free_head_ = x;
    ++free_count_;
    for (ValueId c : children_)
      if (drop(c)) pending_.push_back(c);
  }
}

ValueId ValueArena::lookup(ValueId dict, StringId key) const {
  if (kind(dict) != ValueKind::kDict) return kNoValue;
  const std::vector<ValueId>& list = items(dict);
  for (size_t n = list.size() / 2; n-- > 0;) {
    const ValueId k = list[2 * n];
    if (values_[k].kind == ValueKind::kStr && values_[k].str == key) return list[2 * n + 1];
  }
  return kNoValue;
}

}  // namespace stepscope::trace::snapshot
