#include "monitor/push_line_framer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "monitor/push_protocol.h"

namespace stepscope::monitor {
namespace {

// What the framer hands over: each line, or "<too long>".
std::vector<std::string> frame(const std::string& bytes, size_t chunk, bool* incomplete = nullptr) {
  PushLineFramer f;
  std::vector<std::string> out;
  for (size_t at = 0; at < bytes.size(); at += chunk)
    f.feed(std::string_view(bytes).substr(at, chunk),
           [&](std::string_view line, bool too_long) { out.push_back(too_long ? "<too long>" : std::string(line)); });
  if (incomplete) *incomplete = f.incomplete();
  return out;
}

TEST(PushLineFramer, EveryChunkingGivesTheSameLines) {
  const std::string limit_line = "loss=1" + std::string(kMaxPushLineBytes - 6, ' ');
  const std::string bytes = "step=1\n" + limit_line + "\r\n" + limit_line + " \r\n" + std::string(5000, 'a') +
                            "\nstep=2\r\n\n" + limit_line + "x\nloss=3";
  bool incomplete_whole = false;
  const auto whole = frame(bytes, bytes.size(), &incomplete_whole);
  const std::vector<std::string> expected{"step=1", limit_line + "\r", "<too long>", "<too long>", "step=2\r", "",
                                          "<too long>"};
  EXPECT_EQ(whole, expected);
  EXPECT_TRUE(incomplete_whole);  // "loss=3" has no '\n'
  for (size_t chunk : {1, 2, 3, 7, 64, 1023, 1024, 1025, 1026, 4096}) {
    bool incomplete = false;
    EXPECT_EQ(frame(bytes, chunk, &incomplete), whole) << "chunk " << chunk;
    EXPECT_TRUE(incomplete);
  }
}

TEST(PushLineFramer, AnOverLongTailIsNotIncomplete) {
  bool incomplete = true;
  auto lines = frame(std::string(3000, 'x'), 100, &incomplete);
  EXPECT_EQ(lines, std::vector<std::string>{"<too long>"});
  EXPECT_FALSE(incomplete);  // already reported as too long
}

}  // namespace
}  // namespace stepscope::monitor
