// libFuzzer entry point for the Kineto JSON reader: bytes -> tokenizer ->
// event parser -> finished store (sort, joins). Any crash, sanitizer finding,
// hang or unbounded allocation is a bug: the reader must count bad records and
// stop with an error, never fall over.
//
// Each input is read twice, with a large chunk and with a tiny one, and the two
// stores must agree: cutting the stream at other places must not change what
// is read (records straddling chunk boundaries are the tokenizer's hard part).
// Then twice more with resync (--salvage), under the same rule.
//
//   cmake -S . -B build-fuzz -G Ninja -DSTEPSCOPE_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ...
//   ./build-fuzz/fuzz/fuzz_kineto_json -max_total_time=600 fuzz/corpus   (docs/fuzzing.md)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "trace/event_limits.h"
#include "trace/event_store.h"
#include "trace/trace_reader.h"

namespace {

using namespace stepscope::trace;

struct Read {
  TokenizeResult result;
  EventStore store;
};

void read_with_chunk(std::string_view bytes, size_t chunk, Read& out, bool resync = false) {
  TokenizerOptions options;
  options.chunk_bytes = chunk;
  options.resync = resync;
  out.result = read_trace_bytes(bytes, out.store, options);
}

// Touches every index and argument so the sanitizers check them, and checks
// the store's promises (time order, times within event_limits.h).
void walk(const EventStore& s) {
  const size_t n = s.events.size();
  if (s.events.args_begin.size() != n || s.events.args_count.size() != n) std::abort();
  for (size_t i = 0; i < n; ++i) {
    const EventStore::ArgRows rows = s.arg_rows(i);
    if (rows.last > s.args.size()) std::abort();
    for (uint32_t k = rows.first; k < rows.last; ++k) {
      (void)s.arg_number(i, s.args.key[k]);
      (void)s.arg_string(i, s.args.key[k]);
    }
    if (i > 0 && s.events.ts_ns[i - 1] > s.events.ts_ns[i]) std::abort();  // time-sorted
    // Every kept time is in range, so ends and differences fit int64.
    if (!time_in_range(s.events.ts_ns[i]) || !time_in_range(s.events.dur_ns[i])) std::abort();
    (void)s.name_of(i);
  }
  for (size_t g = 0; g < s.gpu_rows.size(); ++g) {
    if (s.gpu_rows[g] >= n) std::abort();
    if (s.launch_of_gpu[g] != EventStore::kNoRow && s.launch_of_gpu[g] >= n) std::abort();
    if (s.cpu_op_of_gpu[g] != EventStore::kNoRow && s.cpu_op_of_gpu[g] >= n) std::abort();
  }
}

void require_same(const Read& a, const Read& b) {
  bool same = a.result.status == b.result.status && a.result.events == b.result.events &&
              a.result.byte_offset == b.result.byte_offset &&
              a.store.events.ts_ns == b.store.events.ts_ns &&
              a.store.events.dur_ns == b.store.events.dur_ns &&
              a.store.events.correlation == b.store.events.correlation &&
              a.store.events.stream == b.store.events.stream &&
              a.store.args.size() == b.store.args.size() && a.store.flows.id == b.store.flows.id;
  if (!same) {
    std::fprintf(stderr, "chunking changed the result: status %d/%d events %llu/%llu offset %llu/%llu rows %zu/%zu\n",
                 static_cast<int>(a.result.status), static_cast<int>(b.result.status),
                 static_cast<unsigned long long>(a.result.events),
                 static_cast<unsigned long long>(b.result.events),
                 static_cast<unsigned long long>(a.result.byte_offset),
                 static_cast<unsigned long long>(b.result.byte_offset), a.store.events.size(),
                 b.store.events.size());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  Read large, small;
  read_with_chunk(bytes, 1 << 16, large);
  read_with_chunk(bytes, 7, small);
  walk(large.store);
  require_same(large, small);
  // --salvage's resync past damaged records: the same for any chunking, and
  // it only adds what a plain read gave up on.
  Read resync_large, resync_small;
  read_with_chunk(bytes, 1 << 16, resync_large, true);
  read_with_chunk(bytes, 7, resync_small, true);
  walk(resync_large.store);
  require_same(resync_large, resync_small);
  if (resync_large.store.events.size() < large.store.events.size()) {
    std::fprintf(stderr, "resync lost events: %zu < %zu\n", resync_large.store.events.size(), large.store.events.size());
    std::abort();
  }
  return 0;
}
