// First half of the Kineto JSON reader: cuts the uncompressed byte stream
// into records without building a DOM. It walks the top-level object, hands
// every non-traceEvents member to on_member() as raw text, and every element
// of traceEvents to on_event() as raw text, each with its byte offset. The
// second half (kineto_event_parser) turns one record into store rows.
//
// Memory stays bounded by the chunk size plus the largest single record:
// records that straddle a chunk boundary are moved to the front of the buffer
// before the next read. Nesting is tracked with a counter, never recursion.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/byte_source.h"
#include "trace/event_limits.h"

namespace stepscope::trace {

enum class TokenizeStatus {
  kOk,          // the whole document was read
  kTruncated,   // the input ended inside the document (records so far were delivered)
  kBadInput,    // not a trace: wrong structure, invalid bytes, too deep
  kReadError,   // the byte source failed (I/O or corrupt gzip)
};

struct TokenizeResult {
  TokenizeStatus status = TokenizeStatus::kOk;
  std::string message;       // one line, with what was expected
  uint64_t byte_offset = 0;  // uncompressed offset where the problem is
  bool saw_trace_events = false;
  bool bare_array = false;   // the document is a top-level array of events, not an object
  uint64_t events = 0;
};

struct TokenizerCallbacks {
  // A top-level member other than traceEvents. `raw` is the JSON text of the
  // value; it stays valid only during the call and has readable padding after it.
  std::function<void(std::string_view key, std::string_view raw, uint64_t offset)> on_member;
  // One element of traceEvents (padding readable after it, as above).
  std::function<void(std::string_view raw, uint64_t offset)> on_event;
  // With TokenizerOptions::resync: a damaged stretch of traceEvents, from
  // `offset`, `bytes` long (0: two records without the ',' between them, both
  // read), skipped up to the next record; `why` is one line.
  std::function<void(uint64_t offset, uint64_t bytes, std::string_view why)> on_skipped;
};

struct TokenizerOptions {
  size_t chunk_bytes = 1 << 20;  // 1 MB: larger chunks read no faster and cost resident memory
  // A single event or member larger than this is bad input (refused before
  // more than this much of it is buffered; skipped with resync).
  size_t max_record_bytes = kMaxRecordBytes;
  int max_depth = 1024;
  // Salvage: when a traceEvents record cannot be cut out (an unescaped '"'
  // turns every later string inside out, a stray byte, a record that never
  // closes), skip to the next byte where a whole record starts and go on,
  // reporting the stretch through on_skipped. Without it that is an error.
  bool resync = false;
};

TokenizeResult tokenize_trace(ByteSource& source, const TokenizerCallbacks& callbacks,
                              const TokenizerOptions& options = {});

// Padding guaranteed readable after every record handed to the callbacks
// (simdjson needs SIMDJSON_PADDING = 64).
constexpr size_t kRecordPadding = 64;

}  // namespace stepscope::trace
