// One record larger than the record limit (kMaxRecordBytes, 64 MiB; real
// Kineto records are under 7 KB) is refused with one line naming the file,
// the record's byte offset and the limit, once its buffered part passes the
// limit, never after buffering it whole. With --salvage it is skipped and
// counted, and the records after it are read.
#include <gtest/gtest.h>
#include <zlib.h>

#include "cli_run.h"
#include "trace/event_limits.h"
#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

using testing::trace_doc;
using testing::x_event;

std::string big_record(size_t name_bytes) { return x_event("cpu_op", std::string(name_bytes, 'n'), "15", "1"); }

TEST(RecordSizeLimit, RecordPastTheLimitIsRefusedWithItsOffset) {
  const std::string text = trace_doc({x_event("cpu_op", "a", "10", "1"), big_record(10000), x_event("cpu_op", "b", "20", "1")});
  TokenizerOptions opt;
  opt.chunk_bytes = 1024;
  opt.max_record_bytes = 4096;
  EventStore s;
  const TokenizeResult r = read_trace_bytes(text, s, opt);
  EXPECT_EQ(r.status, TokenizeStatus::kBadInput);
  EXPECT_EQ(r.message, "record larger than the limit of 4096 bytes");
  EXPECT_EQ(r.byte_offset, text.find("{\"ph\"", text.find("\"a\"")));
  EXPECT_EQ(s.events.size(), 1u);  // the record before it
}

TEST(RecordSizeLimit, SalvageSkipsTheRecordAndReadsOn) {
  const std::string text = trace_doc({x_event("cpu_op", "a", "10", "1"), big_record(10000), x_event("cpu_op", "b", "20", "1")});
  TokenizerOptions opt;
  opt.chunk_bytes = 1024;
  opt.max_record_bytes = 4096;
  opt.resync = true;
  for (bool pipelined : {false, true}) {
    EventStore s;
    const TokenizeResult r = read_trace_bytes(text, s, opt, pipelined);
    EXPECT_EQ(r.status, TokenizeStatus::kOk) << r.message;
    ASSERT_EQ(s.events.size(), 2u);
    EXPECT_EQ(s.name_of(1), "b");
    ASSERT_EQ(s.stats.count(ImportCounter::kDamagedRecordSkipped), 1u);
    EXPECT_EQ(s.stats.log().front().byte_offset, text.find("{\"ph\"", text.find("\"a\"")));
    EXPECT_EQ(s.stats.log().front().message.rfind("record larger than the limit of 4096 bytes; skipped ", 0), 0u)
        << s.stats.log().front().message;
  }
}

TEST(RecordSizeLimit, DefaultLimitIs64MiB) {
  EXPECT_EQ(TokenizerOptions{}.max_record_bytes, size_t{64} << 20);
  EXPECT_EQ(kMaxRecordBytes, size_t{67108864});
}

// `n` copies of one gzip member holding `piece`: a valid multi-member gzip of
// n * piece.size() bytes, built in milliseconds.
std::string repeated_member(const std::string& piece, size_t n) {
  const std::string member = testing::gzip(piece, 9);
  std::string out;
  out.reserve(member.size() * n);
  for (size_t i = 0; i < n; ++i) out += member;
  return out;
}

// The case that took 45 s and 5 GB before: a 1 MB .gz holding one record of
// 1000 MiB. The CLI refuses it with one line, without inflating it all.
TEST(RecordSizeLimit, GzipOfOne1000MiBRecordIsRefusedByTheCli) {
  testing::TempDir dir;
  const std::string head = "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"";
  const std::string gz = testing::gzip(head) + repeated_member(std::string(1 << 20, 'a'), 1000) +
                         testing::gzip("\", \"ts\": 1, \"dur\": 1}]}");
  ASSERT_LT(gz.size(), size_t{2} << 20);
  const std::string path = dir.write("huge_record.json.gz", gz);
  testing::CliRun r = testing::run_cli(dir, {"analyze", path});
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(r.err_lines.size(), 1u);
  EXPECT_EQ(r.err_lines[0], "stepscope: error: " + path +
                                ": record larger than the limit of 64 MiB (67108864 bytes) at byte " +
                                std::to_string(head.find("{\"ph\"")));
}

}  // namespace
}  // namespace stepscope::trace
