// The memory-snapshot reader on the synthetic snapshots of
// tests/data/snapshots/make_snapshots.py (whose story is known, so every
// number is asserted), at each pickle protocol and in the PyTorch 2.1 shape.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "test_paths.h"
#include "trace/snapshot/snapshot_reader.h"

namespace stepscope::trace::snapshot {
namespace {

constexpr uint64_t MiB = 1 << 20;
constexpr uint64_t kBase = 0x7F0000000000, kSmall = 0x7F0100000000;

std::string path(const std::string& name) { return testing::test_data_dir() + "/snapshots/" + name; }

std::string frame_text(const MemorySnapshot& s, uint32_t frame) {
  return fmt::format("{}:{}:{}", s.strings.get(s.frames.filename[frame]), s.frames.line[frame],
                     s.strings.get(s.frames.name[frame]));
}
std::string stack_text(const MemorySnapshot& s, uint32_t stack) {
  std::string out;
  for (uint32_t i = s.stacks.offsets[stack]; i < s.stacks.offsets[stack + 1]; ++i)
    out += (out.empty() ? "" : " < ") + frame_text(s, s.stacks.frames[i]);
  return out;
}

void expect_story(const MemorySnapshot& s, bool old) {
  ASSERT_EQ(s.segments.rows(), 2u);
  EXPECT_EQ(s.segments.address[0], kBase);
  EXPECT_EQ(s.segments.total_size[0], 20 * MiB);
  EXPECT_EQ(s.segments.allocated_size[0], 12 * MiB);
  EXPECT_TRUE(s.segments.is_large[0]);
  EXPECT_FALSE(s.segments.is_large[1]);
  EXPECT_EQ(s.segments.device[0], old ? -1 : 0);
  ASSERT_EQ(s.blocks.rows(), 5u);
  // Addresses: given, or (PyTorch 2.1) laid out from the segment's start.
  const uint64_t want_addr[] = {kBase, kBase + 8 * MiB, kBase + 12 * MiB, kSmall, kSmall + 512};
  const uint32_t want_segment[] = {0, 0, 0, 1, 1};
  for (int b = 0; b < 5; ++b) {
    EXPECT_EQ(s.blocks.address[b], want_addr[b]) << b;
    EXPECT_EQ(s.blocks.segment[b], want_segment[b]) << b;
  }
  EXPECT_EQ(s.blocks.state[1], BlockState::kActiveAllocated);
  EXPECT_EQ(s.blocks.state[2], BlockState::kInactive);
  EXPECT_EQ(s.blocks.requested_size[0], 8 * MiB - 100);
  EXPECT_EQ(stack_text(s, s.blocks.stack[1]), "attn.py:7:softmax < model.py:40:forward < train.py:10:step");
  EXPECT_EQ(s.blocks.stack[2], 0u);  // no frames
  // Frames are interned: model.py:forward appears in two stacks but once here.
  EXPECT_EQ(s.frames.rows(), 5u);
  ASSERT_EQ(s.trace.rows(), 9u);
  const TraceAction want[] = {TraceAction::kSegmentAlloc, TraceAction::kAlloc, TraceAction::kAlloc,
                              TraceAction::kAlloc, TraceAction::kFreeRequested, TraceAction::kFreeCompleted,
                              TraceAction::kSegmentAlloc, TraceAction::kAlloc, TraceAction::kOom};
  for (int e = 0; e < 9; ++e) {
    EXPECT_EQ(s.trace.action[e], want[e]) << e;
    EXPECT_EQ(s.trace.device[e], 0) << e;
    EXPECT_EQ(s.trace.time_us[e], old ? kNoTime : 1'000'000 + 1000 * e) << e;
  }
  EXPECT_EQ(s.trace.size[3], 6 * MiB);
  EXPECT_EQ(s.trace.addr[3], kBase + 12 * MiB);
  EXPECT_EQ(s.trace.size[8], 12 * MiB);
  EXPECT_EQ(s.trace.device_free[8], 1 * MiB);
  EXPECT_EQ(stack_text(s, s.trace.stack[7]), "data_\xc3\xa9.py:3:collate");
  EXPECT_TRUE(s.warnings.empty()) << s.warnings.front().what;
}

TEST(SnapshotReader, ReadsEveryPickleProtocol) {
  for (int p : {0, 1, 2, 3, 4, 5}) {
    SCOPED_TRACE(p);
    const SnapshotReadResult r = read_memory_snapshot(path(fmt::format("snapshot_p{}.pickle", p)));
    ASSERT_TRUE(r.snapshot) << r.error;
    EXPECT_EQ(r.snapshot->pickle_protocol, p < 2 ? 0 : p);  // PROTO opens protocols 2 and up
    expect_story(*r.snapshot, false);
    const AllocatorSettings& a = r.snapshot->settings;
    EXPECT_TRUE(a.present);
    EXPECT_EQ(a.expandable_segments, 0);
    EXPECT_EQ(a.max_split_size, static_cast<int64_t>(256 * MiB));
    EXPECT_EQ(a.conf, "max_split_size_mb:256");
  }
}

TEST(SnapshotReader, ReadsThePyTorch21Shape) {
  const SnapshotReadResult r = read_memory_snapshot(path("snapshot_v21_p2.pickle"));
  ASSERT_TRUE(r.snapshot) << r.error;
  expect_story(*r.snapshot, true);
  EXPECT_FALSE(r.snapshot->settings.present);
  EXPECT_EQ(r.snapshot->settings.expandable_segments, -1);
}

std::string file_bytes(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(SnapshotReader, EveryTruncationIsAOneLineErrorWithItsOffset) {
  const std::string bytes = file_bytes(path("snapshot_p4.pickle"));
  ASSERT_GT(bytes.size(), 100u);
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    const SnapshotReadResult r = read_memory_snapshot_bytes(std::string_view(bytes).substr(0, cut), "cut.pickle");
    ASSERT_FALSE(r.snapshot) << cut;
    EXPECT_EQ(r.error.find('\n'), std::string::npos) << r.error;
    EXPECT_EQ(r.error.rfind("cut.pickle: ", 0), 0u) << r.error;
    if (cut > 0) {
      EXPECT_NE(r.error.find("offset"), std::string::npos) << r.error;
    }
  }
}

// Bytes from a list of values 0-255 (C++ hex escapes would swallow the
// letters that follow them).
std::string b(std::initializer_list<int> bytes) {
  std::string out;
  for (int x : bytes) out += static_cast<char>(x);
  return out;
}

TEST(SnapshotReader, RefusesGlobalsAndObjectConstruction) {
  // pickle.dumps(os.system, protocol=2) and protocol=4; a REDUCE after plain data.
  SnapshotReadResult r = read_memory_snapshot_bytes(b({0x80, 2}) + "cposix\nsystem\n" + b({'q', 0, '.'}), "evil.pickle");
  ASSERT_FALSE(r.snapshot);
  EXPECT_NE(r.error.find("GLOBAL at offset 2"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("posix.system"), std::string::npos) << r.error;
  r = read_memory_snapshot_bytes(b({0x80, 4, 0x95, 0x14, 0, 0, 0, 0, 0, 0, 0, 0x8c, 5}) + "posix" +
                                     b({0x94, 0x8c, 6}) + "system" + b({0x94, 0x93, 0x94, '.'}),
                                 "evil.pickle");
  ASSERT_FALSE(r.snapshot);
  EXPECT_NE(r.error.find("STACK_GLOBAL at offset 28"), std::string::npos) << r.error;
  r = read_memory_snapshot_bytes(b({0x80, 2, '}', 'q', 0, 'R', '.'}), "evil.pickle");
  ASSERT_FALSE(r.snapshot);
  EXPECT_NE(r.error.find("REDUCE at offset 5"), std::string::npos) << r.error;
  // Refused even when garbage follows: the first pass stops at the opcode.
  r = read_memory_snapshot_bytes(b({0x80, 2, 'R', 0xff, 0xff}), "evil.pickle");
  ASSERT_FALSE(r.snapshot);
  EXPECT_NE(r.error.find("REDUCE at offset 2"), std::string::npos) << r.error;
}

TEST(SnapshotReader, OtherPicklesAreNotSnapshots) {
  // pickle.dumps([1, 2]) and pickle.dumps({'a': 1}), protocol 2; a JSON trace.
  SnapshotReadResult r =
      read_memory_snapshot_bytes(b({0x80, 2, ']', 'q', 0, '(', 'K', 1, 'K', 2, 'e', '.'}), "list.pickle");
  ASSERT_FALSE(r.snapshot);
  EXPECT_NE(r.error.find("not hold a dict"), std::string::npos) << r.error;
  r = read_memory_snapshot_bytes(b({0x80, 2, '}', 'q', 0, 'X', 1, 0, 0, 0, 'a', 'q', 1, 'K', 1, 's', '.'}),
                                 "dict.pickle");
  ASSERT_FALSE(r.snapshot);
  EXPECT_NE(r.error.find("neither 'segments' nor 'device_traces'"), std::string::npos) << r.error;
  r = read_memory_snapshot_bytes("{\"traceEvents\": []}", "trace.json");
  ASSERT_FALSE(r.snapshot);
  EXPECT_NE(r.error.find("not a pickle opcode"), std::string::npos) << r.error;
}

TEST(SnapshotReader, HugeCountsAreRefusedBeforeAllocating) {
  // BINUNICODE8 claiming 2^62 bytes; LONG_BINPUT to slot 2^31; a memo read never stored.
  SnapshotReadResult r = read_memory_snapshot_bytes(b({0x80, 4, 0x8d, 0, 0, 0, 0, 0, 0, 0, 0x40}), "huge.pickle");
  ASSERT_FALSE(r.snapshot);
  EXPECT_NE(r.error.find("above the reader's limit"), std::string::npos) << r.error;
  r = read_memory_snapshot_bytes(b({0x80, 2, '}', 'r', 0, 0, 0, 0x80, '.'}), "memo.pickle");
  ASSERT_FALSE(r.snapshot);
  EXPECT_NE(r.error.find("beyond the reader's limit"), std::string::npos) << r.error;
  r = read_memory_snapshot_bytes(b({0x80, 2, 'h', 5, '.'}), "get.pickle");
  ASSERT_FALSE(r.snapshot);
  EXPECT_NE(r.error.find("memo slot 5 was never stored"), std::string::npos) << r.error;
}

TEST(SnapshotReader, CyclesAndDeepNestingEndCleanly) {
  // A list that contains itself: EMPTY_LIST MEMOIZE BINGET 0 APPEND STOP.
  SnapshotReadResult r = read_memory_snapshot_bytes(b({0x80, 4, ']', 0x94, 'h', 0, 'a', '.'}), "cycle.pickle");
  ASSERT_FALSE(r.snapshot);
  EXPECT_NE(r.error.find("not hold a dict"), std::string::npos) << r.error;
  // A million nested lists (each EMPTY_LIST, then APPENDs into the parents).
  std::string deep = b({0x80, 2});
  const int depth = 1'000'000;
  deep.append(depth, ']');
  deep.append(depth - 1, 'a');
  deep += '.';
  r = read_memory_snapshot_bytes(deep, "deep.pickle");
  ASSERT_FALSE(r.snapshot);
  EXPECT_NE(r.error.find("not hold a dict"), std::string::npos) << r.error;
}

TEST(SnapshotReader, ASegmentWithOnlyItsAddressAndSizeIsRead) {
  // pickle.dumps({'segments': [{'address': 4096, 'total_size': 8192, 'blocks': []}],
  //               'device_traces': []}, protocol=2): no segment_type, stream, device
  // (a fuzzer finding: absent keys were read as values).
  const std::string p =
      b({128, 2, '}', 'q', 0, '(', 'X', 8, 0, 0, 0}) + "segments" + b({'q', 1, ']', 'q', 2, '}', 'q', 3, '(', 'X', 7, 0, 0, 0}) +
      "address" + b({'q', 4, 'M', 0, 16, 'X', 10, 0, 0, 0}) + "total_size" + b({'q', 5, 'M', 0, 32, 'X', 6, 0, 0, 0}) +
      "blocks" + b({'q', 6, ']', 'q', 7, 'u', 'a', 'X', 13, 0, 0, 0}) + "device_traces" + b({'q', 8, ']', 'q', 9, 'u', '.'});
  const SnapshotReadResult r = read_memory_snapshot_bytes(p, "segment.pickle");
  ASSERT_TRUE(r.snapshot) << r.error;
  ASSERT_EQ(r.snapshot->segments.rows(), 1u);
  EXPECT_EQ(r.snapshot->segments.address[0], 4096u);
  EXPECT_EQ(r.snapshot->segments.total_size[0], 8192u);
  EXPECT_FALSE(r.snapshot->segments.is_large[0]);
  EXPECT_EQ(r.snapshot->segments.device[0], -1);
}

TEST(SnapshotReader, BadRowsAreSkippedAndCounted) {
  // A snapshot whose second trace entry has a negative size and whose third
  // has an action that is not a string (pickle protocol 2, written by hand
  // as Python would: {'segments': [], 'device_traces': [[e1, e2, e3]]}).
  auto str = [](std::string_view s) {
    return std::string("X", 1) + std::string(1, static_cast<char>(s.size())) + std::string(3, '\0') + std::string(s);
  };
  std::string p = b({0x80, 2, '}', '('});
  p += str("segments") + "]" + str("device_traces") + "](](";
  p += "}(" + str("action") + str("alloc") + str("addr") + b({'K', 16}) + str("size") + b({'K', 32}) + "u";
  p += "}(" + str("action") + str("alloc") + str("addr") + b({'K', 16}) + str("size") + b({'J', 0xff, 0xff, 0xff, 0xff}) + "u";
  p += "}(" + str("action") + b({'K', 1}) + "u";
  p += "eeu.";
  const SnapshotReadResult r = read_memory_snapshot_bytes(p, "rows.pickle");
  ASSERT_TRUE(r.snapshot) << r.error;
  EXPECT_EQ(r.snapshot->trace.rows(), 1u);
  EXPECT_EQ(r.snapshot->trace.size[0], 32u);
  ASSERT_EQ(r.snapshot->warnings.size(), 2u);
  EXPECT_NE(r.snapshot->warnings[0].what.find("negative"), std::string::npos);
  EXPECT_NE(r.snapshot->warnings[1].what.find("action is not a string"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::trace::snapshot
