#include "monitor/push_protocol.h"

#include <gtest/gtest.h>

#include <cmath>

namespace stepscope::monitor {
namespace {

TEST(PushProtocol, ParsesEveryField) {
  PushParse p = parse_push_line("step=12 loss=2.5 step_time=0.75 tokens=65536 grad_norm=1.25 loss_scale=65536\r");
  ASSERT_TRUE(p.ok) << p.detail;
  EXPECT_EQ(*p.update.step, 12);
  EXPECT_DOUBLE_EQ(*p.update.loss, 2.5);
  EXPECT_DOUBLE_EQ(*p.update.step_time, 0.75);
  EXPECT_EQ(*p.update.tokens, 65536);
  EXPECT_DOUBLE_EQ(*p.update.grad_norm, 1.25);
  EXPECT_DOUBLE_EQ(*p.update.loss_scale, 65536);
}

TEST(PushProtocol, NanOnlyForLoss) {
  PushParse p = parse_push_line("step=3 loss=nan");
  ASSERT_TRUE(p.ok);
  EXPECT_TRUE(std::isnan(*p.update.loss));
  PushParse q = parse_push_line("step=3 grad_norm=nan");
  EXPECT_FALSE(q.ok);
  EXPECT_EQ(q.reason, "out_of_range");
  EXPECT_NE(q.detail.find("grad_norm"), std::string::npos);
}

TEST(PushProtocol, RejectsWithAReason) {
  struct Case {
    const char* line;
    const char* reason;
  } cases[] = {
      {"step=1 lr=3e-4", "unknown_key"},
      {"step=1 step=2", "duplicate_key"},
      {"step=abc", "not_a_number"},
      {"step=1.5", "not_a_number"},
      {"loss=2.5x", "not_a_number"},
      {"loss=inf", "out_of_range"},
      {"step_time=0", "out_of_range"},
      {"tokens=-5", "out_of_range"},
      {"step 5", "syntax"},
      {"=5", "syntax"},
      {"step=", "syntax"},
      {"   ", "empty"},
  };
  for (const Case& c : cases) {
    PushParse p = parse_push_line(c.line);
    EXPECT_FALSE(p.ok) << c.line;
    EXPECT_EQ(p.reason, c.reason) << c.line << ": " << p.detail;
    EXPECT_FALSE(p.detail.empty()) << c.line;
  }
}

TEST(PushProtocol, RejectsOverLongLines) {
  std::string line = "loss=1 ";
  line.append(kMaxPushLineBytes, ' ');
  PushParse p = parse_push_line(line);
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.reason, "too_long");
  EXPECT_TRUE(parse_push_line(std::string("loss=1") + std::string(kMaxPushLineBytes - 6, ' ')).ok);
}

TEST(PushProtocol, FormatRoundTrips) {
  TrainingUpdate u;
  u.step = 7;
  u.loss = std::nan("");
  u.step_time = 0.125;
  u.tokens = 4096;
  std::string line = format_push_line(u);
  EXPECT_EQ(line, "step=7 loss=nan step_time=0.125 tokens=4096\n");
  PushParse p = parse_push_line(line.substr(0, line.size() - 1));
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(*p.update.step, 7);
  EXPECT_TRUE(std::isnan(*p.update.loss));
  EXPECT_FALSE(p.update.grad_norm.has_value());
}

}  // namespace
}  // namespace stepscope::monitor

namespace stepscope::monitor {
namespace {

// Every accepted value has a documented range, so the numbers derived from
// them (tokens/s, MFU) stay finite.
TEST(PushProtocol, ValuesOutsideTheirRangeAreRejected) {
  struct Case {
    const char* line;
    const char* reason;
  } cases[] = {
      {"tokens=1e15 step_time=5e-324", "out_of_range"},  // made tokens_per_second +Inf
      {"step_time=5e-324", "out_of_range"},
      {"step_time=1e-7", "out_of_range"},
      {"step_time=2e6", "out_of_range"},
      {"step_time=1e309", "out_of_range"},  // past the double range: not "not a number"
      {"tokens=2e12", "out_of_range"},
      {"step=1e300", "out_of_range"},
      {"loss=-1e39", "out_of_range"},
      {"grad_norm=1e39", "out_of_range"},
      {"loss_scale=1e-40", "out_of_range"},
      {"loss_scale=0", "out_of_range"},
  };
  for (const Case& c : cases) {
    PushParse p = parse_push_line(c.line);
    EXPECT_FALSE(p.ok) << c.line;
    EXPECT_EQ(p.reason, c.reason) << c.line << ": " << p.detail;
  }
  PushParse edge = parse_push_line("tokens=1e12 step_time=1e-6 loss=-3e38 grad_norm=3e38 loss_scale=65536");
  ASSERT_TRUE(edge.ok) << edge.detail;
  EXPECT_NE(parse_push_line("step_time=1e-7").detail.find("outside 1e-06 to 1e+06 s"), std::string::npos)
      << parse_push_line("step_time=1e-7").detail;
}

}  // namespace
}  // namespace stepscope::monitor
