// The values a restricted unpickler builds: plain data only (None, bools,
// integers, floats, strings, bytes, lists, tuples, dicts, sets) plus
// handles, which stand for a value a sink has already turned into a table
// row. Values live in an arena and are reference-counted (the stack, the
// containers and the memo hold references), so a subtree the sink has
// consumed is freed at once: reading a multi-GB pickle keeps only what is
// still reachable, not the whole tree.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "trace/string_table.h"

namespace stepscope::trace::snapshot {

using ValueId = uint32_t;

enum class ValueKind : uint8_t {
  kFree,    // an arena slot not in use
  kNone,
  kBool,
  kInt,     // fits int64
  kUInt,    // above INT64_MAX, fits uint64 (device addresses can)
  kBigInt,  // does not fit 64 bits: kept as "some integer", never as a number
  kFloat,
  kStr,     // text, UTF-8 as the file holds it, interned
  kBytes,   // bytes/bytearray, interned
  kList,
  kTuple,
  kDict,    // items alternate key, value in insertion order
  kSet,
  kHandle,  // a row a sink made from this value; handle_kind says which table
};

struct Value {
  ValueKind kind = ValueKind::kFree;
  uint8_t handle_kind = 0;
  uint32_t refs = 0;
  uint32_t serial = 0;  // containers: creation order (1, 2, ...), stable while ids are reused
  union {
    int64_t i;
    uint64_t u;
    double f;
    StringId str;
    uint32_t items;   // containers: index into the item lists
    uint32_t handle;  // kHandle: the row
    uint32_t next_free;
  };
  Value() : i(0) {}
};

class ValueArena {
 public:
  explicit ValueArena(StringTable& strings) : strings_(strings) {}

  // New values hold one reference (the caller's).
  ValueId none() { return make(ValueKind::kNone); }
  ValueId boolean(bool b);
  ValueId integer(int64_t v);
  ValueId unsigned_integer(uint64_t v);
  ValueId big_integer() { return make(ValueKind::kBigInt); }
  ValueId real(double v);
  ValueId text(std::string_view s);
  ValueId bytes(std::string_view s);
  // A container; its serial is returned by serial().
  ValueId container(ValueKind kind);
  ValueId handle(uint8_t handle_kind, uint32_t row);

  const Value& operator[](ValueId id) const { return values_[id]; }
  // kFree for kNoValue (a dict key that is absent), so callers can test a
  // lookup's kind without testing for absence first.
  ValueKind kind(ValueId id) const { return id == kNoValue ? ValueKind::kFree : values_[id].kind; }
  uint32_t serial(ValueId id) const { return values_[id].serial; }
  const std::vector<ValueId>& items(ValueId id) const { return lists_[values_[id].items]; }
  std::string_view str(ValueId id) const { return strings_.get(values_[id].str); }
  StringTable& strings() { return strings_; }

  // Moves `item` (and the caller's reference) into the container.
  void add(ValueId container, ValueId item) { lists_[values_[container].items].push_back(item); }
  // Turns a value into a handle in place, releasing what it held: every other
  // reference to it (the memo, a shared parent) now sees the handle.
  void replace_with_handle(ValueId id, uint8_t handle_kind, uint32_t row);

  void retain(ValueId id) { ++values_[id].refs; }
  // Drops one reference; frees the value (and, iteratively, its items) at zero.
  void release(ValueId id);

  // Dict lookup by key text: the last value stored under `key`, or kNoValue.
  ValueId lookup(ValueId dict, StringId key) const;
  static constexpr ValueId kNoValue = UINT32_MAX;

  size_t live() const { return values_.size() - free_count_; }

 private:
  ValueId make(ValueKind kind);
  void clear_payload(ValueId id, std::vector<ValueId>& pending);

  StringTable& strings_;
  std::vector<Value> values_;
  ValueId free_head_ = kNoValue;
  size_t free_count_ = 0;
  std::vector<std::vector<ValueId>> lists_;
  std::vector<uint32_t> free_lists_;
  uint32_t next_serial_ = 0;
  bool drop(ValueId id);  // one reference less; true when none is left
  // release()'s work lists, kept to avoid an allocation per call.
  std::vector<ValueId> pending_, children_;
};

}  // namespace stepscope::trace::snapshot
