// The only way readers write into an EventStore: appends rows, interns
// strings, keeps the per-event argument ranges consistent, and finishes the
// store (time sort, joins). Format readers never touch the columns directly.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "trace/event_store.h"

namespace stepscope::trace {

struct EventRow {
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  StringId name = 0;
  StringId category = 0;
  EventKind kind = EventKind::kOther;
  int32_t pid = 0;
  int64_t tid = 0;
  int64_t stream = kNone;
  uint8_t flags = 0;
  uint32_t seq = 0;
  int16_t device = static_cast<int16_t>(kNone);
  int64_t correlation = kNone;
  int64_t external_id = kNone;
};

class StoreBuilder {
 public:
  explicit StoreBuilder(EventStore& store) : store_(store) {}

  StringId intern(std::string_view s) { return store_.strings.intern(s); }
  EventStore& store() { return store_; }

  // Arguments are staged per event and committed with add_event, so a record
  // rejected half-way leaves no orphan arguments.
  void stage_int_arg(StringId key, int64_t v);
  void stage_double_arg(StringId key, double v);
  void stage_string_arg(StringId key, StringId v, ArgType type = ArgType::kString);
  // Inline for its common case, nothing staged (the reader calls it before
  // every record).
  void discard_staged_args() {
    if (store_.args.size() != staged_from_) drop_staged_args();
  }

  // An argument staged for the event being read, held aside while a Chrome
  // "B" event waits for its "E" (the pair becomes one event).
  struct StagedArg {
    uint16_t key;
    ArgType type;
    int64_t value;
  };
  // Moves the staged arguments out (nothing stays staged).
  std::vector<StagedArg> take_staged_args();
  void restage_args(const std::vector<StagedArg>& args);

  // Sizes the columns for about this many rows before reading, so appending
  // does not reallocate and copy them as they grow. A generous guess costs
  // address space only: pages of the unused tail are never touched.
  void reserve(size_t events, size_t args, size_t flows);

  void add_event(const EventRow& row);
  void add_flow(int64_t id, StringId category, char phase, int64_t ts_ns, int32_t pid, int64_t tid);

  // Sorts events by start time (stable), closes the argument ranges and builds
  // the joins. Call once, after the last event.
  void finish();

 private:
  // False (and the argument counted as dropped) once the event being staged
  // holds kMaxArgsPerEvent arguments, or for a key id that does not fit the
  // 2-byte key column.
  bool can_stage_arg(StringId key);
  void drop_staged_args();

  EventStore& store_;
  size_t staged_from_ = 0;
};

}  // namespace stepscope::trace
