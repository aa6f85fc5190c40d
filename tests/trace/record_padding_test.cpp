// A record is parsed from its own bytes only: simdjson may look past the end
// of a malformed record, and what lies there (the next record's bytes, or a
// read buffer's padding where a read ended) must not decide whether it is
// kept. Found by the fuzzer: the record below, missing the value before its
// '}', was kept when the file's next byte was '}' and rejected when a 7-byte
// read ended right after it. Checked for several read sizes and through the
// pipelined reader (which copies records back to back into batches).
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "trace/event_store.h"
#include "trace/trace_reader.h"

namespace stepscope::trace {
namespace {

struct Read {
  TokenizeResult result;
  EventStore store;
};

void read(const std::string& text, size_t chunk, bool pipelined, Read& out) {
  TokenizerOptions options;
  options.chunk_bytes = chunk;
  out.result = read_trace_bytes(text, out.store, options, pipelined);
}

// Reads `text` directly and through the pipelined reader, with each read
// size, and hands every result to `check`.
template <typename Check>
void for_each_read(const std::string& text, std::initializer_list<size_t> chunks, Check check) {
  for (bool pipelined : {false, true}) {
    for (size_t chunk : chunks) {
      SCOPED_TRACE(std::string(pipelined ? "pipelined" : "direct") + ", chunk " + std::to_string(chunk));
      Read r;
      read(text, chunk, pipelined, r);
      check(r);
    }
  }
}

TEST(RecordPadding, WhatFollowsAMalformedRecordDoesNotDecideIt) {
  // The second record ends at byte 79 (its '}' is the 79th byte); a stray '}' follows.
  const std::string text =
      R"({"traceEvents": [{h" p:""X", : "abc", "dur": 1}, {"ph": "X", "ts": 1, "d1, ": }}]})";
  for_each_read(text, {7, 64, 79, size_t{1} << 16}, [](const Read& r) {
    EXPECT_EQ(r.result.status, TokenizeStatus::kBadInput);
    EXPECT_EQ(r.result.byte_offset, 79u);
    EXPECT_EQ(r.store.events.size(), 0u);
    EXPECT_EQ(r.store.stats.count(ImportCounter::kRecordMalformed), 2u);
  });
}

// The same record followed by a well-formed one: it is still rejected, the
// next one kept, whatever the read size.
TEST(RecordPadding, AMalformedRecordBeforeAGoodOneIsRejectedAlone) {
  const std::string text =
      R"({"traceEvents": [{"ph": "X", "ts": 1, "d1, ": }, {"ph": "X", "ts": 2, "dur": 1}]})";
  for_each_read(text, {7, 47, 48, size_t{1} << 16}, [](const Read& r) {
    EXPECT_EQ(r.result.status, TokenizeStatus::kOk);
    ASSERT_EQ(r.store.events.size(), 1u);
    EXPECT_EQ(r.store.events.ts_ns[0], 2000);
    EXPECT_EQ(r.store.stats.count(ImportCounter::kRecordMalformed), 1u);
  });
}

}  // namespace
}  // namespace stepscope::trace
