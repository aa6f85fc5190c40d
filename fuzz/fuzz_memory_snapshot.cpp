// libFuzzer entry point for the memory-snapshot reader (`stepscope memory`):
// the bytes go to read_memory_snapshot_bytes with small limits, so a mutated
// length or memo index is refused rather than allocated. A refusal is one
// error line naming the input and an offset; nothing may crash, throw, hang
// or execute. An accepted snapshot must be internally consistent: every
// block in a segment that exists, every stack and frame index in range,
// every trace entry on a device. A small accepted snapshot then goes
// through the analyses and the findings (`stepscope memory`'s report), which
// must neither crash nor produce a non-finite number.
//
//   ./build-fuzz/fuzz/fuzz_memory_snapshot -max_total_time=600 fuzz/corpus_fuzz_memory_snapshot   (docs/fuzzing.md)
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <cmath>

#include "diagnose/snapshot_findings.h"
#include "memory/snapshot_report.h"
#include "trace/snapshot/snapshot_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepscope::trace::snapshot;
  PickleLimits limits;
  limits.max_argument_bytes = 1 << 16;
  limits.max_stack = 1 << 16;
  limits.max_memo_index = 1 << 16;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const SnapshotReadResult r = read_memory_snapshot_bytes(bytes, "fuzz.pickle", limits);
  if (!r.snapshot) {
    if (r.error.empty() || r.error.find('\n') != std::string::npos || r.error.rfind("fuzz.pickle: ", 0) != 0)
      std::abort();
    return 0;
  }
  const MemorySnapshot& s = *r.snapshot;
  const size_t stacks = s.stacks.rows();
  if (s.stacks.offsets.front() != 0 || s.stacks.offsets.back() != s.stacks.frames.size()) std::abort();
  for (uint32_t f : s.stacks.frames)
    if (f >= s.frames.rows()) std::abort();
  for (size_t b = 0; b < s.blocks.rows(); ++b)
    if (s.blocks.segment[b] >= s.segments.rows() || s.blocks.stack[b] >= stacks) std::abort();
  for (size_t e = 0; e < s.trace.rows(); ++e)
    if (s.trace.device[e] < 0 || s.trace.stack[e] >= stacks) std::abort();
  for (size_t g = 0; g < s.segments.rows(); ++g)
    if (s.segments.stack[g] >= stacks) std::abort();
  // The analyses replay the history per device: keep them to small inputs
  // so a mutation spends its time in the reader.
  if (s.trace.rows() > 4096 || s.blocks.rows() > 4096) return 0;
  const stepscope::memory::MemoryReport rep = stepscope::memory::build_memory_report(s, "fuzz.pickle");
  for (const auto& f : stepscope::diagnose::snapshot_findings(rep, {.device_bytes = {1ull << 30}})) {
    if (f.title.empty() || f.remedy.empty()) std::abort();
    for (const auto& m : f.evidence.metrics)
      if (!std::isfinite(m.value)) std::abort();
  }
  return 0;
}
