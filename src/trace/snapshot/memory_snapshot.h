// A PyTorch CUDA memory snapshot (torch.cuda.memory._snapshot(), written by
// _dump_snapshot()) as columnar tables: the allocator's segments and blocks
// at the moment of the snapshot, and the recorded history of allocator
// events per device (torch.cuda.memory._record_memory_history). Every
// column is in the units the file gives: bytes, device addresses, CUDA
// stream handles, and microseconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/string_table.h"

namespace stepscope::trace::snapshot {

// TraceEntry.action (c10/cuda/CUDACachingAllocator.h).
enum class TraceAction : uint8_t {
  kAlloc,          // a tensor's block handed out: addr, size
  kFreeRequested,  // the tensor was freed; the block waits for its streams
  kFreeCompleted,  // the block is back in the cache
  kSegmentAlloc,   // cudaMalloc of a new segment: addr, size
  kSegmentFree,    // cudaFree of a segment (empty_cache, or an OOM retry)
  kSegmentMap,     // expandable segments: pages mapped into a segment
  kSegmentUnmap,   // expandable segments: pages unmapped
  kSnapshot,       // a snapshot was taken here
  kOom,            // an allocation failed: size = the request, device_free = what CUDA still had
  kAnnotate,       // a user annotation (PyTorch 2.14+); no memory changes
  kOther,          // an action this reader does not know (kept, counted)
};
std::string_view trace_action_name(TraceAction a);

// Block.state.
enum class BlockState : uint8_t {
  kActiveAllocated,    // held by a tensor
  kActivePendingFree,  // freed by its tensor, still in use by a stream
  kInactive,           // cached, free for reuse
  kOther,
};
std::string_view block_state_name(BlockState s);

constexpr int64_t kNoTime = INT64_MIN;

// Python stack frames, interned: one row per distinct (filename, line, name).
struct SnapshotFrames {
  std::vector<StringId> filename, name;
  std::vector<int64_t> line;
  size_t rows() const { return line.size(); }
};

// Stacks (lists of frame rows, innermost first as the file lists them), in
// CSR form; stack 0 is the empty stack (no frames recorded).
struct SnapshotStacks {
  std::vector<uint32_t> offsets{0, 0};
  std::vector<uint32_t> frames;
  size_t rows() const { return offsets.size() - 1; }
};

struct SnapshotSegments {
  std::vector<int32_t> device;          // CUDA device index (-1: not given)
  std::vector<uint64_t> address;        // first byte of the segment
  std::vector<uint64_t> total_size;     // bytes reserved from CUDA
  std::vector<uint64_t> allocated_size; // bytes in active_allocated blocks
  std::vector<uint64_t> active_size;    // bytes in active blocks (allocated + pending free)
  std::vector<uint64_t> requested_size; // bytes the tensors asked for (before rounding; 0: not given)
  std::vector<uint64_t> stream;         // the stream the segment serves
  std::vector<uint8_t> is_large;        // segment_type "large" (blocks > 1 MB) vs "small"
  std::vector<uint8_t> is_expandable;   // an expandable segment (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)
  std::vector<StringId> pool;           // segment_pool_id as text ("" = the default pool)
  std::vector<uint32_t> stack;          // where the segment was allocated (0: not recorded)
  size_t rows() const { return address.size(); }
};

struct SnapshotBlocks {
  std::vector<uint32_t> segment;        // row in SnapshotSegments
  std::vector<uint64_t> address;
  std::vector<uint64_t> size;           // bytes of the block
  std::vector<uint64_t> requested_size; // bytes the tensor asked for (0: not given)
  std::vector<BlockState> state;
  std::vector<uint32_t> stack;          // where the block's tensor was allocated (0: not recorded)
  size_t rows() const { return address.size(); }
};

// The recorded history, oldest first within each device.
struct SnapshotTrace {
  std::vector<int32_t> device;       // index in device_traces
  std::vector<TraceAction> action;
  std::vector<uint64_t> addr;        // 0 for an OOM
  std::vector<uint64_t> size;        // bytes
  std::vector<uint64_t> stream;
  std::vector<int64_t> time_us;      // time_us as the file gives it (kNoTime: absent)
  std::vector<uint64_t> device_free; // OOM only: bytes CUDA reported free
  std::vector<uint32_t> stack;
  size_t rows() const { return action.size(); }
};

// allocator_settings (PYTORCH_CUDA_ALLOC_CONF as the allocator parsed it).
struct AllocatorSettings {
  bool present = false;
  int expandable_segments = -1;  // -1 not given, 0 off, 1 on
  int64_t max_split_size = -1;   // bytes; -1 not given or unlimited
  double garbage_collection_threshold = -1;
  std::string conf;              // PYTORCH_CUDA_ALLOC_CONF text, when given
};

// Input the reader skipped or could not interpret, counted by kind with the
// byte offset of the first occurrence.
struct SnapshotWarning {
  std::string what;
  uint64_t count = 0;
  uint64_t first_offset = 0;
};

struct MemorySnapshot {
  StringTable strings;
  SnapshotFrames frames;
  SnapshotStacks stacks;
  SnapshotSegments segments;
  SnapshotBlocks blocks;
  SnapshotTrace trace;
  AllocatorSettings settings;
  int pickle_protocol = 0;
  uint64_t file_bytes = 0;
  std::vector<SnapshotWarning> warnings;
};

}  // namespace stepscope::trace::snapshot
