#include "trace/snapshot/snapshot_reader.h"

#include <fmt/format.h>

#include <functional>
#include <stdexcept>

#include "trace/memory_source.h"
#include "trace/snapshot/snapshot_builder.h"

namespace stepscope::trace::snapshot {
namespace {

using OpenSource = std::function<std::unique_ptr<ByteSource>(std::string& error)>;

SnapshotReadResult read(const OpenSource& open, std::string_view name, const PickleLimits& limits) {
  SnapshotReadResult result;
  auto failed = [&](const std::string& why) {
    result.snapshot.reset();
    result.error = fmt::format("{}: {}", name, why);
    return std::move(result);
  };
  std::string error;
  std::vector<bool> referenced;
  {
    std::unique_ptr<ByteSource> source = open(error);
    if (!source) return failed(error);
    PickleScanner scanner(*source, limits.max_argument_bytes);
    if (std::string e = find_memo_references(scanner, limits, referenced); !e.empty()) return failed(e);
  }
  std::unique_ptr<ByteSource> source = open(error);
  if (!source) return failed(error);
  result.snapshot = std::make_unique<MemorySnapshot>();
  MemorySnapshot& snap = *result.snapshot;
  try {
    ValueArena arena(snap.strings);
    SnapshotBuilder builder(snap);
    PickleScanner scanner(*source, limits.max_argument_bytes);
    PickleMachine machine(arena, builder, &referenced, limits);
    PickleInstr in;
    for (;;) {
      const ScanStatus s = scanner.next(in);
      if (s == ScanStatus::kError) return failed(scanner.error());
      if (s == ScanStatus::kEnd) return failed(fmt::format("truncated pickle: the file ends at offset {} before STOP", scanner.offset()));
      const StepStatus step = machine.step(in);
      if (step == StepStatus::kError) return failed(machine.error());
      if (step == StepStatus::kStop) break;
    }
    const ValueId root = machine.take_result();
    std::string bad = builder.finish(arena, root, in.offset);
    arena.release(root);
    if (!bad.empty()) return failed(bad);
    snap.pickle_protocol = machine.protocol();
    snap.file_bytes = scanner.offset();
  } catch (const std::length_error& e) {  // the arena's 2^32-value ceiling
    return failed(e.what());
  }
  return result;
}

}  // namespace

SnapshotReadResult read_memory_snapshot(const std::string& path, const PickleLimits& limits) {
  return read([&](std::string& error) { return open_byte_source(path, GzipBackend::kZlib, error); }, path, limits);
}

SnapshotReadResult read_memory_snapshot_bytes(std::string_view bytes, std::string_view name,
                                              const PickleLimits& limits) {
  return read([&](std::string&) -> std::unique_ptr<ByteSource> { return std::make_unique<MemorySource>(bytes); },
              name, limits);
}

}  // namespace stepscope::trace::snapshot
