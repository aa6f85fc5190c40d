// `plan validate`'s CSV reader on numbers at and past its limits: a bad row is
// skipped with one line naming row, line and column (the reader's documented
// behaviour), and the other rows still run.
#include <gtest/gtest.h>

#include <string>

#include "plan/plan_validation.h"

namespace stepscope::plan {
namespace {

const char* kHeader =
    "source,model,params_B,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq,gpu,n_gpu,tp,pp,dp,cp,vpp,global_batch,"
    "micro_batch,recompute,sequence_parallel,metric,value,flops_convention,step_seconds\n";

std::string row(const std::string& layers, const std::string& value) {
  return std::string(kHeader) + "S,GPT,22," + layers +
         ",6144,64,64,24576,51200,2048,A100-SXM4-80GB,8,8,1,1,1,1,4,4,full,no,step_seconds," + value + ",,\n";
}

// The one skipped row's reason, or what went wrong instead.
std::string skipped(const std::string& text) {
  std::string error;
  auto parsed = parse_validation_csv(text, {}, error);
  if (!parsed) return "file error: " + error;
  if (parsed->skipped.size() != 1) return std::to_string(parsed->skipped.size()) + " rows skipped";
  return parsed->skipped[0].reason;
}

TEST(ValidationLimits, MeasuredValueOutsideItsRangeIsAnError) {
  // 1e-300 s used to be accepted: the relative error came out as inf.
  EXPECT_EQ(skipped(row("48", "1e-300")), "row 0 (line 2), column \"value\": expected a number from 1e-6 to 1e9, got \"1e-300\"");
  EXPECT_EQ(skipped(row("48", "1e309")), "row 0 (line 2), column \"value\": expected a number from 1e-6 to 1e9, got \"1e309\"");
  EXPECT_EQ(skipped(row("48", "nan")), "row 0 (line 2), column \"value\": expected a number from 1e-6 to 1e9, got \"nan\"");
  EXPECT_EQ(skipped(row("48", "1.42")), "0 rows skipped");
}

TEST(ValidationLimits, LabelsWithControlCharactersAreAnError) {
  std::string text = row("48", "1.42");
  text.replace(text.find(",GPT,"), 5, ",G\x1b[2JPT,");  // printed in the report's table
  EXPECT_EQ(skipped(text), "row 0 (line 2), column \"model\": expected 1 to 256 characters without control characters");
}

TEST(ValidationLimits, EndlessFileIsRefusedAtTheSizeLimit) {
  std::string error;
  EXPECT_FALSE(read_validation_csv("/dev/zero", {}, error));
  EXPECT_EQ(error, "/dev/zero: larger than 64 MiB, not a planner input");
}

TEST(ValidationLimits, ModelFieldsPastTheModelLimitsAreAnError) {
  EXPECT_EQ(skipped(row("16777216", "1.42")), "row 0 (line 2): layers (16777216) must be at most 16384");
  EXPECT_EQ(skipped(row("99999999999999999999", "1.42")), "row 0 (line 2), column \"layers\": expected a non-negative integer, got \"99999999999999999999\"");
}

}  // namespace
}  // namespace stepscope::plan
