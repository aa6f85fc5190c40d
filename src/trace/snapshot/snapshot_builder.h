// Turns the values of a snapshot pickle into the tables of MemorySnapshot
// while the file is read: each frame, block, segment and trace entry dict is
// recognised by its keys when it is appended to its list, becomes a row at
// once, and its value is freed (frames stay as small handles until their
// stack is interned). What ties rows together (which list of device_traces
// an entry was in, which segment a block belongs to) is resolved by list
// identity when the top-level dict is complete.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "trace/snapshot/memory_snapshot.h"
#include "trace/snapshot/pickle_machine.h"

namespace stepscope::trace::snapshot {

class SnapshotBuilder : public PickleSink {
 public:
  explicit SnapshotBuilder(MemorySnapshot& out);
  ~SnapshotBuilder() override;

  AppendAction on_append(ValueArena& arena, ValueId list, ValueId item, uint64_t offset,
                         std::string& error) override;
  // The top-level value: the snapshot dict. Returns "" or why the pickle is
  // not a memory snapshot.
  std::string finish(ValueArena& arena, ValueId root, uint64_t offset);

 private:
  enum Handle : uint8_t { kFrameHandle = 1, kBlockHandle, kSegmentHandle, kTraceHandle };
  struct Keys;

  void warn(const std::string& what, uint64_t offset);
  // Row of a frame dict (interned), or UINT32_MAX when it is not one.
  uint32_t frame_row(ValueArena& arena, ValueId frame, uint64_t offset);
  uint32_t stack_of(ValueArena& arena, ValueId dict, uint64_t offset);
  bool add_trace_entry(ValueArena& arena, ValueId d, uint32_t owner, uint64_t offset);
  bool add_block(ValueArena& arena, ValueId d, uint32_t owner, uint64_t offset);
  bool add_segment(ValueArena& arena, ValueId d, uint32_t owner, uint64_t offset);
  // Converts a dict appended to a list (or found in one at the end).
  AppendAction convert(ValueArena& arena, uint32_t owner, ValueId item, uint64_t offset);
  void read_settings(ValueArena& arena, ValueId d, uint64_t offset);

  MemorySnapshot& out_;
  std::unique_ptr<Keys> keys_;
  // Interning without building a key per lookup (a snapshot looks a stack
  // up for every entry): frames by their three fields, stacks by a 64-bit
  // hash of their frame rows, each hit compared in full.
  struct FrameKey {
    StringId file, name;
    int64_t line;
    bool operator==(const FrameKey&) const = default;
  };
  struct FrameKeyHash {
    size_t operator()(const FrameKey& k) const;
  };
  std::unordered_map<FrameKey, uint32_t, FrameKeyHash> frame_index_;
  std::unordered_multimap<uint64_t, uint32_t> stack_index_;
  std::unordered_map<uint32_t, uint32_t> segment_of_blocks_list_;  // blocks list serial -> segment row
  std::vector<uint32_t> trace_owner_, block_owner_, segment_owner_;  // serial of the list each row came in
  std::vector<uint32_t> scratch_;
};

}  // namespace stepscope::trace::snapshot
