// The hardware profile reader (`analyze --profile`) on numbers past their
// limits: 1e309, negative or zero ceilings, values that do not fit the field's
// integer type; each a one-line error naming the field. An accepted profile's
// ceilings are finite and positive.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "hwbench/profile_ceilings.h"
#include "hwbench/profile_fixture.h"
#include "hwbench/profile_json.h"
#include "trace/trace_fixtures.h"

namespace stepscope::hwbench {

using model::profile_from_json;
using model::read_profile_file;
using model::read_profile_text;
namespace {

using nlohmann::json;

std::string error_of(const json& j) {
  std::string error;
  EXPECT_FALSE(profile_from_json(j, "p.json", error)) << j.dump();
  return error;
}

TEST(ProfileLimits, HugeNumberLiteralNamesTheField) {
  std::string text = profile_to_json(testing::h200_profile()).dump();
  const std::string from = "\"gbps\":4210.0";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "\"gbps\":1e309");
  stepscope::testing::TempDir dir;
  std::string path = dir.write("p.json", text);
  std::string error;
  EXPECT_FALSE(read_profile_file(path, error));
  // Used to say only "not valid JSON".
  EXPECT_EQ(error, path + ": field \"stepscope_bench.memory[0].gbps\" holds a number out of range (1e309)");
  EXPECT_FALSE(read_profile_text(text, "mem.json", error));
  EXPECT_EQ(error, "mem.json: field \"stepscope_bench.memory[0].gbps\" holds a number out of range (1e309)");
}

TEST(ProfileLimits, ZeroOrNegativeCeilingsAreRefused) {
  json j = profile_to_json(testing::h200_profile());
  j["stepscope_bench"]["gemm_sweep"][0]["tflops"] = 0;  // used to be accepted
  EXPECT_EQ(error_of(j),
            "p.json: field \"stepscope_bench.gemm_sweep[0].tflops\" must be a number from 0.001 to 1000000, got 0");
  j = profile_to_json(testing::h200_profile());
  j["stepscope_bench"]["memory"][0]["gbps"] = -4210;
  EXPECT_EQ(error_of(j),
            "p.json: field \"stepscope_bench.memory[0].gbps\" must be a number from 0.001 to 1000000, got -4210");
  j = profile_to_json(testing::h200_profile());
  j["stepscope_bench"]["gemm_sweep"][0]["tflops"] = 1e-300;  // efficiencies divide by the ceiling
  EXPECT_EQ(error_of(j),
            "p.json: field \"stepscope_bench.gemm_sweep[0].tflops\" must be a number from 0.001 to 1000000, got 1e-300");
  j = profile_to_json(testing::h200_profile());
  j["stepscope_bench"]["memory"][0]["gbps"] = 1e300;  // used to be accepted as the HBM ceiling
  EXPECT_EQ(error_of(j),
            "p.json: field \"stepscope_bench.memory[0].gbps\" must be a number from 0.001 to 1000000, got 1e+300");
  j = profile_to_json(testing::h200_profile());
  j["stepscope_bench"]["collectives"][0]["points"][1]["busbw_gbps"] = 1e12;
  EXPECT_EQ(error_of(j), "p.json: field \"stepscope_bench.collectives[0].points[1].busbw_gbps\" must be a number from "
                         "0 to 1000000, got 1000000000000.0");
}

TEST(ProfileLimits, IntegerFieldsMustFitTheirType) {
  json j = profile_to_json(testing::h200_profile());
  j["stepscope_bench"]["device"]["sms"] = 1e300;  // used to reach static_cast<int>
  EXPECT_EQ(error_of(j), "p.json: field \"stepscope_bench.device.sms\" must be a whole number from 0 to 2147483647, got 1e+300");
  j = profile_to_json(testing::h200_profile());
  j["stepscope_bench"]["gemm_sweep"][0]["m"] = 8192.5;
  EXPECT_EQ(error_of(j), "p.json: field \"stepscope_bench.gemm_sweep[0].m\" must be a whole number from 0 to 16777216, got 8192.5");
  j = profile_to_json(testing::h200_profile());
  j["stepscope_bench"]["collectives"][0]["fits"][0]["alpha_us"] = "x";
  EXPECT_EQ(error_of(j), "p.json: field \"stepscope_bench.collectives[0].fits[0].alpha_us\" must be a number from -1e+15 "
                         "to 1e+15, got \"x\"");
}

TEST(ProfileLimits, NamesWithControlCharactersAreRefused) {
  json j = profile_to_json(testing::h200_profile());
  j["stepscope_bench"]["device"]["name"] = "NVIDIA\x1b[2J H200";  // analyze prints it
  EXPECT_EQ(error_of(j), "p.json: field \"stepscope_bench.device.name\" must be at most 256 characters without "
                         "control characters");
}

TEST(ProfileLimits, AcceptedProfileHasFinitePositiveCeilings) {
  std::string error;
  auto p = profile_from_json(profile_to_json(testing::h200_profile()), "p.json", error);
  ASSERT_TRUE(p) << error;
  auto row = measured_peaks(*p, error);
  ASSERT_TRUE(row) << error;
  for (double v : {row->bf16_tflops, row->tf32_tflops, row->hbm_gbps, row->memory_gb}) {
    EXPECT_TRUE(std::isfinite(v));
    EXPECT_GT(v, 0);
  }
}

}  // namespace
}  // namespace stepscope::hwbench
