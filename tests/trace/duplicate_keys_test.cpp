// A top-level key written twice: JSON readers disagree on which value
// counts (Python keeps the last, others the first), and reading both would
// count the events twice. Such a file is ambiguous and refused with one line
// naming the file, the key and where its second copy starts.
#include <gtest/gtest.h>

#include "trace_fixtures.h"

namespace stepscope::trace {
namespace {

using testing::TempDir;
using testing::x_event;

TEST(DuplicateKeys, TraceEventsTwiceIsRefusedNotReadTwice) {
  TempDir dir;
  const std::string events = "[" + x_event("cpu_op", "a", "10", "5") + "]";
  std::string text = "{\"traceEvents\": ";
  text += events;
  text += ",\n \"traceEvents\": ";
  text += events;
  text += "}";
  const std::string path = dir.write("dup.json", text);
  EventStore s;
  ReadOutcome out = testing::read(path, s);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.error, path +
                           ": top-level key \"traceEvents\" appears twice (ambiguous: JSON readers differ on which "
                           "one counts) at byte " +
                           std::to_string(text.rfind("\"traceEvents\"")));
  // --salvage does not pick one either: nothing is read twice.
  EventStore salvaged;
  out = testing::read(path, salvaged, true);
  EXPECT_LE(salvaged.events.size(), 1u);
}

TEST(DuplicateKeys, AnyRepeatedTopLevelKeyIsRefused) {
  TempDir dir;
  const std::string text = "{\"baseTimeNanoseconds\": 1, \"traceEvents\": [" + x_event("cpu_op", "a", "10", "5") +
                           "], \"baseTimeNanoseconds\": 2}";
  const std::string path = dir.write("dup_base.json", text);
  EventStore s;
  ReadOutcome out = testing::read(path, s);
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.error.find("top-level key \"baseTimeNanoseconds\" appears twice"), std::string::npos) << out.error;
}

// Keys repeated inside a record are the parser's business (the last read
// wins for a field), not an ambiguity of the file.
TEST(DuplicateKeys, SameKeyInDifferentRecordsOrNestedIsFine) {
  TempDir dir;
  const std::string text = "{\"meta\": {\"traceEvents\": 1}, \"traceEvents\": [" + x_event("cpu_op", "a", "10", "5") +
                           "," + x_event("cpu_op", "b", "20", "5") + "]}";
  EventStore s;
  ReadOutcome out = testing::read(dir.write("ok.json", text), s);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(s.events.size(), 2u);
}

}  // namespace
}  // namespace stepscope::trace
