// The pipelined tokenizer (tokenize and inflate on a second thread, records
// handed over in batches) delivers exactly the callbacks tokenize_trace
// delivers: same records, same order, same offsets, same member names, and
// the same result on truncated or broken input. The reader's store is built
// from these calls alone, so equal calls mean an equal store.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trace/byte_source.h"
#include "trace/json/json_tokenizer.h"
#include "trace/json/record_pipeline.h"
#include "trace/memory_source.h"
#include "trace/trace_reader.h"
#include "trace/trace_fixtures.h"

namespace stepscope::trace {
namespace {

struct Call {
  std::string key;  // "" for events
  std::string raw;
  uint64_t offset;
  bool operator==(const Call&) const = default;
};

struct Run {
  std::vector<Call> calls;
  TokenizeResult result;
};

template <typename Tokenize>
Run run(ByteSource& src, Tokenize tokenize, size_t chunk) {
  Run r;
  TokenizerCallbacks cb;
  cb.on_event = [&](std::string_view raw, uint64_t offset) { r.calls.push_back({"", std::string(raw), offset}); };
  cb.on_member = [&](std::string_view key, std::string_view raw, uint64_t offset) {
    r.calls.push_back({"member:" + std::string(key), std::string(raw), offset});
  };
  TokenizerOptions opt;
  opt.chunk_bytes = chunk;
  r.result = tokenize(src, cb, opt);
  return r;
}

void expect_same(const std::string& text, size_t chunk) {
  MemorySource a(text), b(text);
  Run seq = run(a, [](auto& s, auto& cb, auto& o) { return tokenize_trace(s, cb, o); }, chunk);
  Run pipe = run(b, [](auto& s, auto& cb, auto& o) { return tokenize_trace_pipelined(s, cb, o); }, chunk);
  ASSERT_EQ(pipe.calls.size(), seq.calls.size());
  for (size_t i = 0; i < seq.calls.size(); ++i) ASSERT_EQ(pipe.calls[i], seq.calls[i]) << "call " << i;
  EXPECT_EQ(pipe.result.status, seq.result.status);
  EXPECT_EQ(pipe.result.message, seq.result.message);
  EXPECT_EQ(pipe.result.byte_offset, seq.result.byte_offset);
  EXPECT_EQ(pipe.result.events, seq.result.events);
  EXPECT_EQ(pipe.result.saw_trace_events, seq.result.saw_trace_events);
}

// Enough records for several 1 MB batches, members before and after
// traceEvents, and one record larger than a batch.
std::string big_document() {
  std::string text = "{\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 3}, \"traceEvents\": [\n";
  for (int i = 0; i < 30000; ++i) {
    if (i) text += ",\n";
    text += testing::x_event("cpu_op", "aten::op" + std::to_string(i % 97), std::to_string(1000 + i) + ".125", "2.5");
  }
  text += ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"" + std::string(3 << 20, 'k') +
          "\", \"ts\": 1, \"dur\": 1, \"pid\": 0, \"tid\": 7}";
  text += "\n], \"baseTimeNanoseconds\": 1790857026000000000, \"traceName\": \"t\"}\n";
  return text;
}

TEST(RecordPipeline, SameCallsAsTheSequentialTokenizer) {
  const std::string text = big_document();
  for (size_t chunk : {size_t{4096}, size_t{1} << 20}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    expect_same(text, chunk);
  }
}

TEST(RecordPipeline, SameResultOnTruncatedAndBrokenInput) {
  const std::string text = big_document();
  expect_same(text.substr(0, text.size() / 2), 1 << 16);           // truncated inside traceEvents
  expect_same(text.substr(0, 40), 1 << 16);                        // truncated inside a member
  expect_same(text.substr(0, 2000) + "]]]}", 1 << 16);             // wrong structure
  expect_same("", 1 << 16);                                        // empty
  expect_same("[{\"ph\": \"X\", \"ts\": 1}, {\"ph\": \"i\"}]", 1 << 16);  // bare array
}

TEST(RecordPipeline, ReaderBuildsTheSameStoreOnARealTrace) {
  SKIP_WITHOUT_SHARED();
  const std::string path = testing::shared_trace("traces/h200/gpt_baseline_bf16");
  EventStore seq, pipe;
  ReadOptions o;
  ASSERT_TRUE(read_trace_file(path, seq, o).ok);
  o.pipeline = true;
  ASSERT_TRUE(read_trace_file(path, pipe, o).ok);
  EXPECT_EQ(pipe.events.ts_ns, seq.events.ts_ns);
  EXPECT_EQ(pipe.events.dur_ns, seq.events.dur_ns);
  EXPECT_EQ(pipe.events.name, seq.events.name);
  EXPECT_EQ(pipe.events.correlation, seq.events.correlation);
  EXPECT_EQ(pipe.events.args_begin, seq.events.args_begin);
  EXPECT_EQ(pipe.events.args_count, seq.events.args_count);
  EXPECT_EQ(pipe.args.key, seq.args.key);
  EXPECT_EQ(pipe.args.value, seq.args.value);
  EXPECT_EQ(pipe.flows.id, seq.flows.id);
  EXPECT_EQ(pipe.strings.size(), seq.strings.size());
  EXPECT_EQ(pipe.meta.base_time_ns, seq.meta.base_time_ns);
  EXPECT_EQ(pipe.meta.rank, seq.meta.rank);
}

}  // namespace
}  // namespace stepscope::trace
