// The tokenizer's structural scan (64-byte blocks, with a byte-by-byte path
// for blocks holding backslashes) cuts records exactly where the JSON says,
// whatever the alignment of quotes, escapes and brackets to the blocks and
// to the read chunks. The oracle is the text the test itself assembled.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trace/json/json_tokenizer.h"
#include "trace/memory_source.h"

namespace stepscope::trace {
namespace {

struct Cut {
  TokenizeResult result;
  std::vector<std::string> events;
  std::vector<uint64_t> offsets;
};

Cut tokenize(const std::string& text, size_t chunk, int max_depth = 1024) {
  MemorySource src(text);
  Cut cut;
  TokenizerCallbacks cb;
  cb.on_event = [&](std::string_view raw, uint64_t offset) {
    cut.events.emplace_back(raw);
    cut.offsets.push_back(offset);
  };
  TokenizerOptions opt;
  opt.chunk_bytes = chunk;
  opt.max_depth = max_depth;
  cut.result = tokenize_trace(src, cb, opt);
  return cut;
}

// Records whose strings hold every troublesome character: brackets, escaped
// quotes after backslash runs of 1 to 5, escaped backslashes before a real
// closing quote, and padding that slides each of them across block borders.
std::vector<std::string> tricky_records() {
  std::vector<std::string> records;
  for (int pad = 0; pad < 70; ++pad) {
    for (int run = 1; run <= 5; ++run) {
      std::string slashes(static_cast<size_t>(run), '\\');
      // An odd run escapes the quote after it; an even run is escaped
      // backslashes and the quote after it closes the string.
      std::string inner = run % 2 ? slashes + "\"}]{[" : slashes;
      std::string r = "{\"ph\": \"X\", \"name\": \"" + std::string(static_cast<size_t>(pad), 'a') + "{[" + inner +
                      "\", \"args\": {\"Input Dims\": [[1, 2], [3]], \"s\": \"]}\\\\\", \"t\": [\"}\", {\"u\": \"[\"}]}}";
      records.push_back(std::move(r));
    }
  }
  return records;
}

std::string document(const std::vector<std::string>& records) {
  std::string text = "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"x]}\\\"\"}],\n"
                     "  \"traceEvents\": [\n";
  for (size_t i = 0; i < records.size(); ++i) {
    text += i ? ",\n  " : "  ";
    text += records[i];
  }
  text += "\n  ],\n  \"traceName\": \"t\"\n}\n";
  return text;
}

TEST(TokenizerScan, CutsTrickyRecordsExactlyAtEveryAlignmentAndChunkSize) {
  const std::vector<std::string> records = tricky_records();
  const std::string text = document(records);
  for (size_t chunk : {size_t{64}, size_t{100}, size_t{127}, size_t{1000}, size_t{4096}, size_t{1} << 22}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    Cut cut = tokenize(text, chunk);
    ASSERT_EQ(cut.result.status, TokenizeStatus::kOk) << cut.result.message;
    ASSERT_EQ(cut.events.size(), records.size());
    for (size_t i = 0; i < records.size(); ++i) {
      ASSERT_EQ(cut.events[i], records[i]) << "record " << i;
      ASSERT_EQ(text.compare(cut.offsets[i], records[i].size(), records[i]), 0) << "offset of record " << i;
    }
  }
}

TEST(TokenizerScan, DepthLimitIsExactAtEveryAlignment) {
  // Nesting of exactly max_depth passes; one more fails at that bracket.
  const int max_depth = 70;
  for (int pad = 0; pad < 66; ++pad) {
    for (int extra : {0, 1}) {
      const int depth = max_depth + extra;
      std::string rec = "{\"name\": \"" + std::string(static_cast<size_t>(pad), 'b') + "\", \"a\": ";
      for (int d = 1; d < depth; ++d) rec += "[";
      rec += "1";
      for (int d = 1; d < depth; ++d) rec += "]";
      rec += "}";
      const std::string prefix = "{\"traceEvents\": [";
      const std::string text = prefix + rec + "]}";
      Cut cut = tokenize(text, 1 << 20, max_depth);
      if (extra == 0) {
        ASSERT_EQ(cut.result.status, TokenizeStatus::kOk) << "pad " << pad << ": " << cut.result.message;
        ASSERT_EQ(cut.events.size(), 1u);
        EXPECT_EQ(cut.events[0], rec);
      } else {
        ASSERT_EQ(cut.result.status, TokenizeStatus::kBadInput) << "pad " << pad;
        // The offending bracket is the (max_depth+1)-th opening one.
        size_t at = prefix.size() + rec.find('[') + static_cast<size_t>(max_depth - 1);
        EXPECT_EQ(cut.result.byte_offset, at) << "pad " << pad;
        EXPECT_EQ(text[at], '[');
      }
    }
  }
}

TEST(TokenizerScan, RecordCutByTheEndOfInputIsTruncatedNotMisread) {
  const std::vector<std::string> records = tricky_records();
  const std::string text = document(records);
  // Cut inside the 10th record at every byte of it: the first nine survive.
  size_t start = text.find(records[9]);
  ASSERT_NE(start, std::string::npos);
  for (size_t cut_at = start + 1; cut_at < start + records[9].size(); cut_at += 7) {
    Cut cut = tokenize(text.substr(0, cut_at), 128);
    EXPECT_EQ(cut.result.status, TokenizeStatus::kTruncated) << "cut at " << cut_at;
    EXPECT_EQ(cut.events.size(), 9u) << "cut at " << cut_at;
  }
}

}  // namespace
}  // namespace stepscope::trace

namespace stepscope::trace {
namespace {

// A file of whitespace only is empty, and the error points at its start
// whatever the read size (found by the fuzzer: the offset was that of the
// last read when the input was longer than one chunk).
TEST(TokenizerScan, WhitespaceOnlyIsEmptyAtByteZeroForEveryChunkSize) {
  for (const std::string& text : {std::string(70, '\r'), std::string(1000, ' '), std::string(" \n\t\n")}) {
    for (size_t chunk : {size_t{1}, size_t{7}, size_t{64}, size_t{1} << 16}) {
      Cut cut = tokenize(text, chunk);
      EXPECT_EQ(cut.result.status, TokenizeStatus::kBadInput) << text.size() << " bytes, chunk " << chunk;
      EXPECT_EQ(cut.result.message, "empty file (no JSON value)");
      EXPECT_EQ(cut.result.byte_offset, 0u) << text.size() << " bytes, chunk " << chunk;
    }
  }
}

}  // namespace
}  // namespace stepscope::trace
