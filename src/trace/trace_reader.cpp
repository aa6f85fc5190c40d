#include "trace/trace_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <new>

#include "trace/json/json_tokenizer.h"
#include "trace/json/kineto_event_parser.h"
#include "trace/json/record_pipeline.h"
#include "trace/memory_source.h"
#include "trace/store_builder.h"

namespace stepscope::trace {

namespace {

// Counts bytes handed to the tokenizer, for throughput figures.
class CountingSource final : public ByteSource {
 public:
  explicit CountingSource(ByteSource& inner) : inner_(inner) {}
  ReadResult read(char* buffer, size_t capacity) override {
    ReadResult r = inner_.read(buffer, capacity);
    total_ += r.bytes;
    return r;
  }
  uint64_t file_offset() const override { return inner_.file_offset(); }
  bool compressed() const override { return inner_.compressed(); }
  uint64_t total() const { return total_; }

 private:
  ByteSource& inner_;
  uint64_t total_ = 0;
};

// About how much JSON the file holds, to size the store's columns before
// reading: the file size, or for gzip the trailer's ISIZE (uncompressed size
// mod 2^32 of the last member) but at least 4x the compressed size.
uint64_t estimated_json_bytes(const std::string& path, uint64_t file_bytes, bool compressed) {
  if (!compressed) return file_bytes;
  uint64_t estimate = file_bytes * 4;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return estimate;
  unsigned char trailer[4];
  if (file_bytes >= 18 && ::pread(fd, trailer, 4, static_cast<off_t>(file_bytes - 4)) == 4) {
    uint64_t isize = trailer[0] | uint64_t{trailer[1]} << 8 | uint64_t{trailer[2]} << 16 | uint64_t{trailer[3]} << 24;
    // ISIZE is a hint only (last member, mod 2^32, any bytes at all in a
    // truncated file); deflate expands at most 1032:1, so larger claims are noise.
    if (isize <= file_bytes * 1032) estimate = std::max(estimate, isize);
  }
  ::close(fd);
  return estimate;
}

ReadOutcome read_trace_file_unguarded(const std::string& path, EventStore& store, const ReadOptions& options);

}  // namespace

ReadOutcome read_trace_file(const std::string& path, EventStore& store, const ReadOptions& options) {
  // Out of memory while reading one file (a huge store under an address-space
  // limit) ends that file with one line, never the process.
  try {
    return read_trace_file_unguarded(path, store, options);
  } catch (const std::bad_alloc&) {
    ReadOutcome out;
    out.error = path + ": out of memory while reading this file";
    store.events = EventColumns{};
    store.args = ArgColumns{};
    store.flows = FlowColumns{};
    return out;
  }
}

namespace {
ReadOutcome read_trace_file_unguarded(const std::string& path, EventStore& store, const ReadOptions& options) {
  ReadOutcome out;
  store.source_path = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    out.error = path + ": not a readable file";
    return out;
  }
  out.file_bytes = static_cast<uint64_t>(st.st_size);
  std::string open_error;
  auto source = open_byte_source(path, options.gzip, open_error);
  if (!source) {
    out.error = path + ": " + open_error;
    return out;
  }
  CountingSource counting(*source);
  StoreBuilder builder(store);
  // Kineto records run 150-400 bytes with 1-5 kept arguments each; reserving
  // for the small end means the columns almost never grow (and copy) while
  // reading. Unused reservation is address space, not memory, but only in
  // columns large enough for their own mapping (256 KiB, the mmap threshold
  // the CLI fixes when each file has a thread of its own). A small trace's
  // columns live in the heap, where the unused part can be memory touched
  // before: they grow as they fill instead (a 1,024-rank set of 0.4 MB ranks
  // held 78 MB less, docs/performance.md).
  const uint64_t json_bytes = estimated_json_bytes(path, out.file_bytes, source->compressed());
  const size_t events = static_cast<size_t>(std::min<uint64_t>(json_bytes / 150, UINT32_MAX));
  try {
    if (events * sizeof(int64_t) >= kOwnMappingBytes) builder.reserve(events, events * 4, events / 2);
  } catch (const std::bad_alloc&) {
    // Under an address-space limit the reservation may not fit; it is only a
    // speed hint, so read without it.
  }
  KinetoEventParser parser(builder);
  const TokenizerCallbacks cb = parser.callbacks();
  TokenizerOptions to;
  to.resync = options.salvage;  // a damaged record is skipped, not the end of the reading
  TokenizeResult tr = options.pipeline ? tokenize_trace_pipelined(counting, cb, to) : tokenize_trace(counting, cb, to);
  out.uncompressed_bytes = counting.total();

  if (tr.status == TokenizeStatus::kOk && !tr.saw_trace_events) {
    out.not_a_trace = true;
    out.error = path + ": valid JSON but not a trace (no top-level \"traceEvents\")";
    return out;
  }
  if (tr.status == TokenizeStatus::kOk && tr.bare_array && store.events.size() == 0 &&
      store.flows.size() == 0) {
    // A bare array is Chrome's "JSON array" trace form only if it holds
    // events; [1,2] or [] is some other JSON file (skipped in folders).
    out.not_a_trace = true;
    out.error = path + ": valid JSON but not a trace (top-level array holds no trace events)";
    return out;
  }
  parser.finish();
  if (tr.status != TokenizeStatus::kOk) {
    std::string where = source->compressed() && tr.status == TokenizeStatus::kReadError
                            ? ""
                            : " at byte " + std::to_string(tr.byte_offset);
    out.error = path + ": " + tr.message + where;
    if (!where.empty()) out.error_byte = static_cast<int64_t>(tr.byte_offset);
    bool salvageable = tr.events > 0 || store.events.size() > 0;
    if (!options.salvage || !salvageable) return out;
    store.stats.add(ImportCounter::kTruncatedInput, tr.byte_offset, tr.message);
    out.salvaged = true;
  }
  builder.finish();
  out.ok = true;
  return out;
}
}  // namespace

TokenizeResult read_trace_bytes(std::string_view bytes, EventStore& store, const TokenizerOptions& options,
                                bool pipelined) {
  MemorySource source(bytes);
  StoreBuilder builder(store);
  KinetoEventParser parser(builder);
  const TokenizerCallbacks cb = parser.callbacks();
  TokenizeResult result = pipelined ? tokenize_trace_pipelined(source, cb, options) : tokenize_trace(source, cb, options);
  parser.finish();
  builder.finish();
  return result;
}

}  // namespace stepscope::trace
