// Process and thread names from "M" records: some traces repeat the same
// record once per event (the MTIA test trace holds 124k of them, 10
// distinct), so a record that repeats an id's current name is kept once;
// a different name for the same id is still added. The parser skips a
// byte-identical repeat without parsing it (RepeatedMetadata): these tests
// also pin that the skip changes nothing a full parse would have done.
#include <gtest/gtest.h>

#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

std::string name_record(const std::string& what, int pid, int tid, const std::string& name) {
  return "{\"name\": \"" + what + "\", \"ph\": \"M\", \"ts\": 0.000, \"pid\": " + std::to_string(pid) +
         ", \"tid\": " + std::to_string(tid) + ", \"args\": {\"name\": \"" + name + "\"}}";
}

TEST(MetadataNames, RepeatedRecordsAreKeptOnce) {
  std::vector<std::string> events = testing::cpu_ops(2);
  for (int i = 0; i < 1000; ++i) {
    events.push_back(name_record("process_name", 9, 0, "MTIA 9"));
    events.push_back(name_record("thread_name", 9, 1, "Stream 1 FW"));
  }
  events.push_back(name_record("thread_name", 9, 2, "DMA_REQUEST"));
  events.push_back(name_record("thread_name", 9, 1, "Stream 1 renamed"));
  // Record 2004: its sequence number counts the skipped repeats too.
  events.push_back(testing::x_event("cpu_op", "aten::after_names", "2000", "5"));
  testing::TempDir dir;
  EventStore s;
  ASSERT_TRUE(testing::read(dir.write("t.json", testing::trace_doc(events)), s).ok);
  ASSERT_EQ(s.events.size(), 3u);
  EXPECT_EQ(s.events.seq[2], 2004u);
  ASSERT_EQ(s.meta.process_names.size(), 1u);
  EXPECT_EQ(s.meta.process_names[0], (std::pair<int32_t, std::string>{9, "MTIA 9"}));
  std::vector<std::pair<int64_t, std::string>> want = {{1, "Stream 1 FW"}, {2, "DMA_REQUEST"}, {1, "Stream 1 renamed"}};
  EXPECT_EQ(s.meta.thread_names, want);
}

// A name set again after another name replaced it is added again, even when
// its record is byte-identical to one read before the change.
TEST(MetadataNames, ANameBackAfterARenameIsAddedAgain) {
  std::vector<std::string> events = testing::cpu_ops(1);
  for (const char* name : {"X", "X", "X", "Y", "X", "X", "Y"}) events.push_back(name_record("thread_name", 9, 1, name));
  testing::TempDir dir;
  EventStore s;
  ASSERT_TRUE(testing::read(dir.write("t.json", testing::trace_doc(events)), s).ok);
  std::vector<std::pair<int64_t, std::string>> want = {{1, "X"}, {1, "Y"}, {1, "X"}, {1, "Y"}};
  EXPECT_EQ(s.meta.thread_names, want);
}

// A repeated metadata record that is counted when read (here an unparsed
// stream id) is counted every time, skipped repeats included.
TEST(MetadataNames, CountsOfARepeatedRecordAreKept) {
  std::vector<std::string> events = testing::cpu_ops(1);
  const std::string labels =
      R"({"name": "process_labels", "ph": "M", "ts": 0.000, "pid": 9, "tid": 0, "args": {"labels": "MTIA 9", "stream": "q0"}})";
  for (int i = 0; i < 5; ++i) events.push_back(labels);
  testing::TempDir dir;
  EventStore s;
  ASSERT_TRUE(testing::read(dir.write("t.json", testing::trace_doc(events)), s).ok);
  EXPECT_EQ(s.stats.count(ImportCounter::kUnparsedId), 5u);
}

}  // namespace
}  // namespace stepscope::trace
