#include "trace/snapshot/snapshot_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace stepscope::trace::snapshot {

std::string_view trace_action_name(TraceAction a) {
  switch (a) {
    case TraceAction::kAlloc: return "alloc";
    case TraceAction::kFreeRequested: return "free_requested";
    case TraceAction::kFreeCompleted: return "free_completed";
    case TraceAction::kSegmentAlloc: return "segment_alloc";
    case TraceAction::kSegmentFree: return "segment_free";
    case TraceAction::kSegmentMap: return "segment_map";
    case TraceAction::kSegmentUnmap: return "segment_unmap";
    case TraceAction::kSnapshot: return "snapshot";
    case TraceAction::kOom: return "oom";
    case TraceAction::kAnnotate: return "annotate";
    case TraceAction::kOther: return "other";
  }
  return "other";
}

std::string_view block_state_name(BlockState s) {
  switch (s) {
    case BlockState::kActiveAllocated: return "active_allocated";
    case BlockState::kActivePendingFree: return "active_pending_free";
    case BlockState::kInactive: return "inactive";
    case BlockState::kOther: return "other";
  }
  return "other";
}

// The key strings, interned once so dict lookups compare ids.
struct SnapshotBuilder::Keys {
  StringId filename, line, name, action, addr, size, stream, time_us, frames, device_free, state, address,
      requested_size, blocks, total_size, allocated_size, active_size, segment_type, device, is_expandable,
      segment_pool_id, segments, device_traces, allocator_settings, expandable_segments, max_split_size,
      garbage_collection_threshold, conf, history;
  explicit Keys(StringTable& t)
      : filename(t.intern("filename")), line(t.intern("line")), name(t.intern("name")), action(t.intern("action")),
        addr(t.intern("addr")), size(t.intern("size")), stream(t.intern("stream")), time_us(t.intern("time_us")),
        frames(t.intern("frames")), device_free(t.intern("device_free")), state(t.intern("state")),
        address(t.intern("address")), requested_size(t.intern("requested_size")), blocks(t.intern("blocks")),
        total_size(t.intern("total_size")), allocated_size(t.intern("allocated_size")),
        active_size(t.intern("active_size")), segment_type(t.intern("segment_type")), device(t.intern("device")),
        is_expandable(t.intern("is_expandable")), segment_pool_id(t.intern("segment_pool_id")),
        segments(t.intern("segments")), device_traces(t.intern("device_traces")),
        allocator_settings(t.intern("allocator_settings")), expandable_segments(t.intern("expandable_segments")),
        max_split_size(t.intern("max_split_size")),
        garbage_collection_threshold(t.intern("garbage_collection_threshold")),
        conf(t.intern("PYTORCH_CUDA_ALLOC_CONF")), history(t.intern("history")) {}
};

namespace {

constexpr uint64_t kNoAddress = UINT64_MAX;

// An integer field as unsigned 64 bits: absent (`fallback`), or false when
// it is not a non-negative integer.
bool unsigned_field(const ValueArena& a, ValueId v, uint64_t fallback, uint64_t& out) {
  if (v == ValueArena::kNoValue || a.kind(v) == ValueKind::kNone) {
    out = fallback;
    return true;
  }
  if (a.kind(v) == ValueKind::kInt && a[v].i >= 0) {
    out = static_cast<uint64_t>(a[v].i);
    return true;
  }
  if (a.kind(v) == ValueKind::kUInt) {
    out = a[v].u;
    return true;
  }
  return false;
}

// A stream handle: any 64-bit integer, kept as its bit pattern.
uint64_t stream_field(const ValueArena& a, ValueId v) {
  if (v == ValueArena::kNoValue) return 0;
  if (a.kind(v) == ValueKind::kInt) return static_cast<uint64_t>(a[v].i);
  if (a.kind(v) == ValueKind::kUInt) return a[v].u;
  return 0;
}

template <class T>
void compact(std::vector<T>& column, const std::vector<uint8_t>& keep) {
  size_t w = 0;
  for (size_t r = 0; r < column.size(); ++r)
    if (keep[r]) column[w++] = column[r];
  column.resize(w);
}

}  // namespace

SnapshotBuilder::SnapshotBuilder(MemorySnapshot& out) : out_(out), keys_(std::make_unique<Keys>(out.strings)) {}
SnapshotBuilder::~SnapshotBuilder() = default;

size_t SnapshotBuilder::FrameKeyHash::operator()(const FrameKey& k) const {
  uint64_t h = (static_cast<uint64_t>(k.file) << 32 | k.name) * 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(h ^ (static_cast<uint64_t>(k.line) * 0xC2B2AE3D27D4EB4Full) ^ (h >> 31));
}

void SnapshotBuilder::warn(const std::string& what, uint64_t offset) {
  for (SnapshotWarning& w : out_.warnings)
    if (w.what == what) {
      ++w.count;
      return;
    }
  out_.warnings.push_back({what, 1, offset});
}

uint32_t SnapshotBuilder::frame_row(ValueArena& a, ValueId f, uint64_t offset) {
  if (a.kind(f) == ValueKind::kHandle) return a[f].handle_kind == kFrameHandle ? a[f].handle : UINT32_MAX;
  if (a.kind(f) != ValueKind::kDict) return UINT32_MAX;
  const ValueId file = a.lookup(f, keys_->filename), line = a.lookup(f, keys_->line), name = a.lookup(f, keys_->name);
  if (file == ValueArena::kNoValue || a.kind(file) != ValueKind::kStr) return UINT32_MAX;
  const StringId file_id = a[file].str;
  const StringId name_id = name != ValueArena::kNoValue && a.kind(name) == ValueKind::kStr ? a[name].str : 0;
  int64_t line_no = -1;
  if (line != ValueArena::kNoValue && a.kind(line) == ValueKind::kInt) line_no = a[line].i;
  else if (line != ValueArena::kNoValue) warn("frame with a line that is not an integer (kept as -1)", offset);
  auto [it, added] = frame_index_.try_emplace(FrameKey{file_id, name_id, line_no}, static_cast<uint32_t>(out_.frames.rows()));
  if (added) {
    out_.frames.filename.push_back(file_id);
    out_.frames.name.push_back(name_id);
    out_.frames.line.push_back(line_no);
  }
  return it->second;
}

uint32_t SnapshotBuilder::stack_of(ValueArena& a, ValueId d, uint64_t offset) {
  const ValueId frames = a.lookup(d, keys_->frames);
  if (frames == ValueArena::kNoValue || a.kind(frames) == ValueKind::kNone) return 0;
  if (a.kind(frames) != ValueKind::kList && a.kind(frames) != ValueKind::kTuple) {
    warn("frames that are not a list (stack left out)", offset);
    return 0;
  }
  scratch_.clear();
  for (ValueId f : a.items(frames)) {
    const uint32_t row = frame_row(a, f, offset);
    if (row == UINT32_MAX) {
      warn("a frame that is not a {filename, line, name} dict (left out of its stack)", offset);
      continue;
    }
    scratch_.push_back(row);
  }
  if (scratch_.empty()) return 0;
  uint64_t h = 0x9E3779B97F4A7C15ull ^ scratch_.size();
  for (uint32_t f : scratch_) h = (h ^ f) * 0x100000001B3ull, h ^= h >> 29;
  const auto [lo, hi] = stack_index_.equal_range(h);
  for (auto it = lo; it != hi; ++it) {
    const uint32_t* frames = out_.stacks.frames.data() + out_.stacks.offsets[it->second];
    const size_t n = out_.stacks.offsets[it->second + 1] - out_.stacks.offsets[it->second];
    if (n == scratch_.size() && std::equal(scratch_.begin(), scratch_.end(), frames)) return it->second;
  }
  const auto id = static_cast<uint32_t>(out_.stacks.rows());
  out_.stacks.frames.insert(out_.stacks.frames.end(), scratch_.begin(), scratch_.end());
  out_.stacks.offsets.push_back(static_cast<uint32_t>(out_.stacks.frames.size()));
  stack_index_.emplace(h, id);
  return id;
}

bool SnapshotBuilder::add_trace_entry(ValueArena& a, ValueId d, uint32_t owner, uint64_t offset) {
  const ValueId action = a.lookup(d, keys_->action);
  if (a.kind(action) != ValueKind::kStr) {
    warn("trace entry whose action is not a string (skipped)", offset);
    return false;
  }
  const std::string_view name = a.str(action);
  TraceAction act = TraceAction::kOther;
  for (TraceAction t : {TraceAction::kAlloc, TraceAction::kFreeRequested, TraceAction::kFreeCompleted,
                        TraceAction::kSegmentAlloc, TraceAction::kSegmentFree, TraceAction::kSegmentMap,
                        TraceAction::kSegmentUnmap, TraceAction::kSnapshot, TraceAction::kOom,
                        TraceAction::kAnnotate})
    if (trace_action_name(t) == name) act = t;
  if (act == TraceAction::kOther) warn(fmt::format("trace entry with unknown action '{}' (kept as other)", name), offset);
  uint64_t addr = 0, size = 0, device_free = 0;
  if (!unsigned_field(a, a.lookup(d, keys_->addr), 0, addr) || !unsigned_field(a, a.lookup(d, keys_->size), 0, size) ||
      !unsigned_field(a, a.lookup(d, keys_->device_free), 0, device_free)) {
    warn("trace entry with a negative or non-integer addr, size or device_free (skipped)", offset);
    return false;
  }
  int64_t time = kNoTime;
  const ValueId t = a.lookup(d, keys_->time_us);
  if (t != ValueArena::kNoValue && a.kind(t) == ValueKind::kInt) time = a[t].i;
  else if (t != ValueArena::kNoValue && a.kind(t) != ValueKind::kNone) warn("trace entry time_us that is not an integer (left out)", offset);
  SnapshotTrace& tr = out_.trace;
  tr.device.push_back(-1);
  tr.action.push_back(act);
  tr.addr.push_back(addr);
  tr.size.push_back(size);
  tr.stream.push_back(stream_field(a, a.lookup(d, keys_->stream)));
  tr.time_us.push_back(time);
  tr.device_free.push_back(device_free);
  tr.stack.push_back(stack_of(a, d, offset));
  trace_owner_.push_back(owner);
  return true;
}

bool SnapshotBuilder::add_block(ValueArena& a, ValueId d, uint32_t owner, uint64_t offset) {
  uint64_t address = 0, size = 0, requested = 0;
  if (!unsigned_field(a, a.lookup(d, keys_->address), kNoAddress, address) ||
      !unsigned_field(a, a.lookup(d, keys_->size), 0, size) ||
      !unsigned_field(a, a.lookup(d, keys_->requested_size), 0, requested)) {
    warn("block with a negative or non-integer address or size (skipped)", offset);
    return false;
  }
  const ValueId st = a.lookup(d, keys_->state);
  BlockState state = BlockState::kOther;
  if (a.kind(st) == ValueKind::kStr) {
    const std::string_view s = a.str(st);
    if (s == "active_allocated") state = BlockState::kActiveAllocated;
    // "active_pending_free" in the allocator's C++, "active_awaiting_free" in the Python docs.
    else if (s == "active_pending_free" || s == "active_awaiting_free") state = BlockState::kActivePendingFree;
    else if (s == "inactive") state = BlockState::kInactive;
  }
  if (state == BlockState::kOther) warn("block with an unknown state (kept as other)", offset);
  SnapshotBlocks& b = out_.blocks;
  b.segment.push_back(UINT32_MAX);
  b.address.push_back(address);
  b.size.push_back(size);
  b.requested_size.push_back(requested);
  b.state.push_back(state);
  // PyTorch 2.0 kept a block's allocation stack in its last `history` entry.
  uint32_t stack = stack_of(a, d, offset);
  const ValueId history = a.lookup(d, keys_->history);
  if (stack == 0 && a.kind(history) == ValueKind::kList && !a.items(history).empty())
    stack = stack_of(a, a.items(history).back(), offset);
  b.stack.push_back(stack);
  block_owner_.push_back(owner);
  return true;
}

bool SnapshotBuilder::add_segment(ValueArena& a, ValueId d, uint32_t owner, uint64_t offset) {
  uint64_t address = 0, total = 0, allocated = 0, active = 0, requested = 0;
  if (!unsigned_field(a, a.lookup(d, keys_->address), 0, address) ||
      !unsigned_field(a, a.lookup(d, keys_->total_size), 0, total) ||
      !unsigned_field(a, a.lookup(d, keys_->allocated_size), 0, allocated) ||
      !unsigned_field(a, a.lookup(d, keys_->active_size), 0, active) ||
      !unsigned_field(a, a.lookup(d, keys_->requested_size), 0, requested)) {
    warn("segment with a negative or non-integer address or size (skipped)", offset);
    return false;
  }
  const uint32_t row = static_cast<uint32_t>(out_.segments.rows());
  SnapshotSegments& s = out_.segments;
  int32_t device = -1;
  const ValueId dev = a.lookup(d, keys_->device);
  if (dev != ValueArena::kNoValue && a.kind(dev) == ValueKind::kInt && a[dev].i >= 0 && a[dev].i < INT32_MAX)
    device = static_cast<int32_t>(a[dev].i);
  const ValueId type = a.lookup(d, keys_->segment_type);
  const ValueId expandable = a.lookup(d, keys_->is_expandable);
  const ValueId pool = a.lookup(d, keys_->segment_pool_id);
  std::string pool_text;
  if (pool != ValueArena::kNoValue && (a.kind(pool) == ValueKind::kTuple || a.kind(pool) == ValueKind::kList)) {
    for (ValueId p : a.items(pool)) {
      if (!pool_text.empty()) pool_text += ',';
      pool_text += a.kind(p) == ValueKind::kInt ? fmt::format("{}", a[p].i) : std::string("?");
    }
    if (pool_text == "0,0") pool_text.clear();  // (0, 0) is the default pool
  }
  s.device.push_back(device);
  s.address.push_back(address);
  s.total_size.push_back(total);
  s.allocated_size.push_back(allocated);
  s.active_size.push_back(active);
  s.requested_size.push_back(requested);
  s.stream.push_back(stream_field(a, a.lookup(d, keys_->stream)));
  s.is_large.push_back(a.kind(type) == ValueKind::kStr && a.str(type) == "large");
  s.is_expandable.push_back(expandable != ValueArena::kNoValue && a.kind(expandable) == ValueKind::kBool &&
                            a[expandable].i != 0);
  s.pool.push_back(out_.strings.intern(pool_text));
  s.stack.push_back(stack_of(a, d, offset));
  segment_owner_.push_back(owner);
  const ValueId blocks = a.lookup(d, keys_->blocks);
  if (blocks != ValueArena::kNoValue && a.kind(blocks) == ValueKind::kList) {
    segment_of_blocks_list_[a.serial(blocks)] = row;
    // Blocks the list still holds (built without APPEND, e.g. by LIST): convert them now.
    for (ValueId b : a.items(blocks))
      if (a.kind(b) == ValueKind::kDict) convert(a, a.serial(blocks), b, offset);
  }
  return true;
}

AppendAction SnapshotBuilder::convert(ValueArena& a, uint32_t owner, ValueId item, uint64_t offset) {
  if (a.kind(item) == ValueKind::kHandle) {
    if (a[item].handle_kind == kFrameHandle) return AppendAction::kKeep;
    warn("a block, segment or trace entry listed twice (the second is ignored)", offset);
    return AppendAction::kConsumed;
  }
  if (a.kind(item) != ValueKind::kDict) return AppendAction::kKeep;
  const Keys& k = *keys_;
  if (a.lookup(item, k.action) != ValueArena::kNoValue) {
    const uint32_t row = static_cast<uint32_t>(out_.trace.rows());
    if (add_trace_entry(a, item, owner, offset)) a.replace_with_handle(item, kTraceHandle, row);
    return AppendAction::kConsumed;
  }
  if (a.lookup(item, k.blocks) != ValueArena::kNoValue || a.lookup(item, k.total_size) != ValueArena::kNoValue) {
    const uint32_t row = static_cast<uint32_t>(out_.segments.rows());
    if (add_segment(a, item, owner, offset)) a.replace_with_handle(item, kSegmentHandle, row);
    return AppendAction::kConsumed;
  }
  if (a.lookup(item, k.state) != ValueArena::kNoValue) {
    const uint32_t row = static_cast<uint32_t>(out_.blocks.rows());
    if (add_block(a, item, owner, offset)) a.replace_with_handle(item, kBlockHandle, row);
    return AppendAction::kConsumed;
  }
  if (a.lookup(item, k.filename) != ValueArena::kNoValue) {
    const uint32_t row = frame_row(a, item, offset);
    if (row != UINT32_MAX) a.replace_with_handle(item, kFrameHandle, row);
    return AppendAction::kKeep;
  }
  return AppendAction::kKeep;
}

AppendAction SnapshotBuilder::on_append(ValueArena& a, ValueId list, ValueId item, uint64_t offset, std::string&) {
  return convert(a, a.serial(list), item, offset);
}

void SnapshotBuilder::read_settings(ValueArena& a, ValueId d, uint64_t offset) {
  AllocatorSettings& s = out_.settings;
  s.present = true;
  const ValueId e = a.lookup(d, keys_->expandable_segments);
  if (e != ValueArena::kNoValue) {
    if (a.kind(e) == ValueKind::kBool || a.kind(e) == ValueKind::kInt) s.expandable_segments = a[e].i != 0;
    else warn("allocator_settings.expandable_segments that is not a bool", offset);
  }
  const ValueId m = a.lookup(d, keys_->max_split_size);
  if (m != ValueArena::kNoValue && a.kind(m) == ValueKind::kInt) s.max_split_size = a[m].i;
  const ValueId g = a.lookup(d, keys_->garbage_collection_threshold);
  if (g != ValueArena::kNoValue && a.kind(g) == ValueKind::kFloat) s.garbage_collection_threshold = a[g].f;
  const ValueId c = a.lookup(d, keys_->conf);
  if (c != ValueArena::kNoValue && a.kind(c) == ValueKind::kStr) s.conf = std::string(a.str(c));
}

std::string SnapshotBuilder::finish(ValueArena& a, ValueId root, uint64_t offset) {
  // torch.cuda.memory_snapshot() gives the segments alone, as a list.
  const bool segments_only = a.kind(root) == ValueKind::kList && !segment_owner_.empty() &&
                             std::all_of(segment_owner_.begin(), segment_owner_.end(),
                                         [&](uint32_t o) { return o == a.serial(root); });
  if (a.kind(root) != ValueKind::kDict && !segments_only)
    return "the pickle does not hold a dict (or a list of segments), so it is not a memory snapshot";
  const ValueId segments = segments_only ? root : a.lookup(root, keys_->segments);
  const ValueId traces = segments_only ? ValueArena::kNoValue : a.lookup(root, keys_->device_traces);
  if (segments == ValueArena::kNoValue && traces == ValueArena::kNoValue)
    return "the pickle's dict has neither 'segments' nor 'device_traces', so it is not a memory snapshot";
  // Rows whose dicts are still in the lists (lists built without APPEND).
  for (ValueId list : {segments, traces}) {
    if (list == ValueArena::kNoValue || a.kind(list) != ValueKind::kList) continue;
    for (ValueId item : a.items(list)) {
      if (a.kind(item) == ValueKind::kDict) convert(a, a.serial(list), item, offset);
      if (list == traces && a.kind(item) == ValueKind::kList)
        for (ValueId e : a.items(item))
          if (a.kind(e) == ValueKind::kDict) convert(a, a.serial(item), e, offset);
    }
  }
  // Trace entries: the device is the position of their list in device_traces.
  std::unordered_map<uint32_t, int32_t> device_of;
  if (traces != ValueArena::kNoValue) {
    if (a.kind(traces) != ValueKind::kList) {
      warn("device_traces that is not a list (history left out)", offset);
    } else {
      int32_t d = 0;
      for (ValueId l : a.items(traces)) {
        if (a.kind(l) == ValueKind::kList) device_of[a.serial(l)] = d;
        ++d;
      }
    }
  }
  std::vector<uint8_t> keep(out_.trace.rows());
  for (size_t r = 0; r < keep.size(); ++r) {
    const auto it = device_of.find(trace_owner_[r]);
    keep[r] = it != device_of.end();
    if (keep[r]) out_.trace.device[r] = it->second;
    else warn("trace entry outside device_traces (skipped)", offset);
  }
  SnapshotTrace& t = out_.trace;
  compact(t.device, keep), compact(t.action, keep), compact(t.addr, keep), compact(t.size, keep);
  compact(t.stream, keep), compact(t.time_us, keep), compact(t.device_free, keep), compact(t.stack, keep);
  // Segments must come from the top-level list; blocks from a segment's list.
  const uint32_t segments_serial =
      segments != ValueArena::kNoValue && a.kind(segments) == ValueKind::kList ? a.serial(segments) : 0;
  std::vector<uint32_t> new_row(out_.segments.rows(), UINT32_MAX);
  keep.assign(out_.segments.rows(), 0);
  uint32_t kept = 0;
  for (size_t r = 0; r < keep.size(); ++r) {
    keep[r] = segment_owner_[r] == segments_serial;
    if (keep[r]) new_row[r] = kept++;
    else warn("segment outside the top-level segments list (skipped)", offset);
  }
  SnapshotSegments& s = out_.segments;
  compact(s.device, keep), compact(s.address, keep), compact(s.total_size, keep), compact(s.allocated_size, keep);
  compact(s.active_size, keep), compact(s.requested_size, keep), compact(s.stream, keep), compact(s.is_large, keep);
  compact(s.is_expandable, keep), compact(s.pool, keep), compact(s.stack, keep);
  keep.assign(out_.blocks.rows(), 0);
  SnapshotBlocks& b = out_.blocks;
  for (size_t r = 0; r < keep.size(); ++r) {
    const auto it = segment_of_blocks_list_.find(block_owner_[r]);
    if (it != segment_of_blocks_list_.end() && new_row[it->second] != UINT32_MAX) {
      b.segment[r] = new_row[it->second];
      keep[r] = 1;
    } else {
      warn("block outside a segment's blocks list (skipped)", offset);
    }
  }
  compact(b.segment, keep), compact(b.address, keep), compact(b.size, keep), compact(b.requested_size, keep);
  compact(b.state, keep), compact(b.stack, keep);
  // Blocks without an address (older files) lie one after another from their segment's start.
  std::vector<uint64_t> cursor(s.rows());
  for (size_t r = 0; r < s.rows(); ++r) cursor[r] = s.address[r];
  for (size_t r = 0; r < b.rows(); ++r) {
    if (b.address[r] == kNoAddress) b.address[r] = cursor[b.segment[r]];
    cursor[b.segment[r]] = b.address[r] + b.size[r];
  }
  const ValueId settings = segments_only ? ValueArena::kNoValue : a.lookup(root, keys_->allocator_settings);
  if (settings != ValueArena::kNoValue && a.kind(settings) == ValueKind::kDict) read_settings(a, settings, offset);
  return "";
}

}  // namespace stepscope::trace::snapshot
