// Process and thread names from "M" records: some traces repeat the same
// record once per event (the MTIA test trace holds 124k of them, 10
// distinct), so a record that repeats an id's current name is kept once;
// a different name for the same id is still added.
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
  testing::TempDir dir;
  EventStore s;
  ASSERT_TRUE(testing::read(dir.write("t.json", testing::trace_doc(events)), s).ok);
  EXPECT_EQ(s.events.size(), 2u);
  ASSERT_EQ(s.meta.process_names.size(), 1u);
  EXPECT_EQ(s.meta.process_names[0], (std::pair<int32_t, std::string>{9, "MTIA 9"}));
  std::vector<std::pair<int64_t, std::string>> want = {{1, "Stream 1 FW"}, {2, "DMA_REQUEST"}, {1, "Stream 1 renamed"}};
  EXPECT_EQ(s.meta.thread_names, want);
}

}  // namespace
}  // namespace stepscope::trace
