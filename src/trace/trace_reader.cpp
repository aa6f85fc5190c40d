#include "trace/trace_reader.h"

#include <sys/stat.h>

#include "trace/json/json_tokenizer.h"
#include "trace/json/kineto_event_parser.h"
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

}  // namespace

ReadOutcome read_trace_file(const std::string& path, EventStore& store, const ReadOptions& options) {
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
  KinetoEventParser parser(builder);
  TokenizerCallbacks cb;
  cb.on_member = [&](std::string_view key, std::string_view raw, uint64_t offset) {
    parser.parse_member(key, raw, offset);
  };
  cb.on_event = [&](std::string_view raw, uint64_t offset) { parser.parse_event(raw, offset); };
  TokenizeResult tr = tokenize_trace(counting, cb);
  out.uncompressed_bytes = counting.total();

  if (tr.status == TokenizeStatus::kOk && !tr.saw_trace_events) {
    out.not_a_trace = true;
    out.error = path + ": valid JSON but not a trace (no top-level \"traceEvents\")";
    return out;
  }
  if (tr.status != TokenizeStatus::kOk) {
    std::string where = source->compressed() && tr.status == TokenizeStatus::kReadError
                            ? ""
                            : " at byte " + std::to_string(tr.byte_offset);
    out.error = path + ": " + tr.message + where;
    bool salvageable = tr.events > 0 || store.events.size() > 0;
    if (!options.salvage || !salvageable) return out;
    store.stats.add(ImportCounter::kTruncatedInput, tr.byte_offset, tr.message);
    out.salvaged = true;
  }
  builder.finish();
  out.ok = true;
  return out;
}

}  // namespace stepscope::trace
