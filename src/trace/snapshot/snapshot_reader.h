// Reads a PyTorch CUDA memory snapshot (the pickle of _dump_snapshot(), plain
// or gzip-compressed) into a MemorySnapshot, in two streaming passes over the
// file: the first finds which memo entries are read back, the second runs the
// restricted unpickler (pickle_machine.h) with the snapshot builder as its
// sink. Errors are one line naming the file and the byte offset.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "trace/snapshot/memory_snapshot.h"
#include "trace/snapshot/pickle_machine.h"

namespace stepscope::trace::snapshot {

struct SnapshotReadResult {
  std::unique_ptr<MemorySnapshot> snapshot;  // null on error
  std::string error;
};

SnapshotReadResult read_memory_snapshot(const std::string& path, const PickleLimits& limits = {});
// The same from bytes in memory (tests, the fuzzer); `name` is used in errors.
SnapshotReadResult read_memory_snapshot_bytes(std::string_view bytes, std::string_view name = "<memory>",
                                              const PickleLimits& limits = {});

}  // namespace stepscope::trace::snapshot
