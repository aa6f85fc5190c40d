// `stepscope plan` (and its subcommands), `bench` and `analyze --profile` on
// adversarial input: each case is a small generated input or option value
// with the exit status and the message the user must get. Never a crash, a
// silent fallback to a default, or a plan built from a wrong number.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_run.h"
#include "test_paths.h"
#include "trace/trace_fixtures.h"

namespace stepscope::cli {
namespace {

using testing::CliRun;
using testing::joined;
using testing::run_cli;
using testing::TempDir;

// Exit 2, nothing on stdout, and one stderr
// line holding `needle` (the option or file, the field and the value).
void expect_refused(const CliRun& r, const std::string& needle) {
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(r.err_lines.size(), 1u) << joined(r.err_lines);
  EXPECT_NE(r.err_lines[0].find(needle), std::string::npos) << joined(r.err_lines);
  EXPECT_TRUE(r.out.empty()) << r.out;
}

// Options with a bad number: the option and the value are named.
struct OptionCase {
  std::vector<std::string> args;
  std::string needle;
};

TEST(AdversarialPlan, NumericOptionsAreCheckedBeforeAnyWork) {
  TempDir dir;
  const std::vector<OptionCase> cases = {
      // Used to plan a batch of 1 / one GPU.
      {{"plan", "--model", "gpt3-125m", "--global-batch", "-8"}, "--global-batch: expected a whole number from 1 to 16777216, got \"-8\""},
      {{"plan", "--model", "gpt3-125m", "--global-batch", "0"}, "--global-batch: expected a whole number from 1 to 16777216, got \"0\""},
      {{"plan", "--model", "gpt3-125m", "--gpus", "-4"}, "--gpus: expected a whole number from 1 to 16777216, got \"-4\""},
      {{"plan", "--model", "gpt3-125m", "--gpus", "0"}, "--gpus: expected a whole number from 1 to 16777216, got \"0\""},
      {{"plan", "--model", "gpt3-125m", "--gpus", "99999999999"}, "--gpus: expected a whole number from 1 to 16777216, got \"99999999999\""},
      {{"plan", "--model", "gpt3-125m", "--tp", "abc"}, "--tp: expected a whole number from 1 to 1048576, got \"abc\""},
      {{"plan", "--model", "gpt3-125m", "--pp", "0"}, "--pp: expected a whole number from 1 to 1048576, got \"0\""},
      {{"plan", "--model", "gpt3-125m", "--micro-batch", "1.5"}, "--micro-batch: expected a whole number from 1 to 1048576, got \"1.5\""},
      {{"plan", "--model", "gpt3-125m", "--vpp", "-1"}, "--vpp: expected a whole number from 1 to 1048576, got \"-1\""},
      {{"plan", "--model", "gpt3-125m", "--activation-bits", "1e3"}, "--activation-bits: expected a whole number from 4 to 16, got \"1e3\""},
      {{"plan", "search", "--model", "gpt3-125m", "--gpus", "-1", "--global-batch", "8"}, "--gpus: expected a whole number from 1 to 16777216, got \"-1\""},
      {{"plan", "search", "--model", "gpt3-125m", "--gpus", "8", "--global-batch", "8", "--top", "0"}, "--top: expected a whole number from 1 to 100000, got \"0\""},
      {{"plan", "recompute", "--model", "gpt3-125m", "--global-batch", "8", "--budget-gb", "nan"}, "--budget-gb: expected a number above 0 and at most 1e+06, got \"nan\""},
      {{"plan", "recompute", "--model", "gpt3-125m", "--global-batch", "8", "--budget-gb", "inf"}, "--budget-gb: expected a number above 0 and at most 1e+06, got \"inf\""},
      {{"plan", "recompute", "--model", "gpt3-125m", "--global-batch", "8", "--dp", "-2"}, "--dp: expected a whole number from 1 to 1048576, got \"-2\""},
      {{"plan", "pareto", "--model", "gpt3-125m", "--micro-batches", "1,-2"}, "--micro-batches: expected a whole number from 1 to 1048576, got \"-2\""},
      {{"plan", "pareto", "--model", "gpt3-125m", "--global-batches", "8,1e9"}, "--global-batches: expected a whole number from 1 to 16777216, got \"1e9\""},
      {{"plan", "sharding", "--model", "gpt3-125m", "--gpus", "8,0", "--global-batch", "8"}, "--gpus: expected a whole number from 1 to 16777216, got \"0\""},
      {{"plan", "--model", "gpt3-125m", "--moe-capacity-factor", "0"}, "--moe-capacity-factor: expected a number above 0 and at most 4096, got \"0\""},
      {{"plan", "search", "--model", "gpt3-125m", "--gpus", "8", "--moe-capacity-factor", "nan"}, "--moe-capacity-factor: expected a number above 0 and at most 4096, got \"nan\""},
      // A dense model has no experts to cap; padding needs a capacity.
      {{"plan", "--model", "gpt3-125m", "--moe-capacity-factor", "1.25"}, "--moe-capacity-factor: model gpt3-125m has no experts"},
      {{"bench", "--device", "-1"}, "--device: expected a whole number from 0 to 1023, got \"-1\""},
      {{"bench", "--nccl-gpus", "5000"}, "--nccl-gpus: expected a whole number from 0 to 1024, got \"5000\""},
  };
  for (const OptionCase& c : cases) {
    SCOPED_TRACE(joined(c.args));
    expect_refused(run_cli(dir, c.args), c.needle);
  }
}

// Layout products past the planner's limits: refused before any int product.
TEST(AdversarialPlan, LayoutProductsPastTheLimitsAreRefused) {
  TempDir dir;
  expect_refused(run_cli(dir, {"plan", "--model", "gpt3-125m", "--tp", "1048576", "--pp", "1048576"}),
                 "stepscope: error: --tp/--pp/--dp/--cp: tp × pp × dp × cp = 1099511627776 GPUs, more than 16777216");
  expect_refused(run_cli(dir, {"plan", "--model", "gpt3-125m", "--dp", "1048576", "--micro-batch", "1048576"}),
                 "stepscope: error: --global-batch: dp × micro-batch = 1099511627776 is more than 16777216");
  expect_refused(run_cli(dir, {"plan", "recompute", "--model", "gpt3-125m", "--dp", "1048576", "--micro-batch", "1048576"}),
                 "stepscope: error: --global-batch: dp × micro-batch = 1099511627776 is more than 16777216");
  expect_refused(run_cli(dir, {"plan", "pareto", "--model", "gpt3-125m", "--pp", "4096", "--vpp", "4096"}),
                 "stepscope: error: --pp/--vpp: pp × vpp = 16777216, more than 1048576");
}

const char* kModel = R"({"name": "m", "layers": 2, "hidden": 64, "heads": 4, "vocab": 100, "seq": 8)";

// A model JSON with a number past a double's range used to abort `plan` and
// `plan search` (an uncaught nlohmann out_of_range).
// /dev/zero must be refused by the 64 MiB input cap, not by running out of
// memory: under a 4 GB address-space limit it would abort if read whole.
// ASan's shadow memory cannot live under ulimit -v, so that tree has no limit.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STEPSCOPE_TEST_UNDER_ASAN 1
#endif
#endif
#ifdef STEPSCOPE_TEST_UNDER_ASAN
const char* const kMemoryLimit = "";
#else
const char* const kMemoryLimit = "ulimit -v 4000000;";
#endif

TEST(AdversarialPlan, ModelFileWithHugeNumbersIsAnError) {
  TempDir dir;
  const std::string huge = dir.write("huge.json", std::string(kModel) + R"(, "ffn_hidden": 1e309})");
  const std::string msg = "stepscope: error: " + huge + ": field \"ffn_hidden\" holds a number out of range (1e309)";
  expect_refused(run_cli(dir, {"plan", "--model", huge}), msg);
  expect_refused(run_cli(dir, {"plan", "search", "--model", huge, "--gpus", "8", "--global-batch", "8"}), msg);
  expect_refused(run_cli(dir, {"plan", "sharding", "--model", huge, "--gpus", "8", "--global-batch", "8"}), msg);
  const std::string layers = dir.write("layers.json", R"({"layers": 1e18, "hidden": 64, "heads": 4, "vocab": 100, "seq": 8})");
  expect_refused(run_cli(dir, {"plan", "--model", layers}),
                 "stepscope: error: " + layers + ": field \"layers\" must be an integer from 1 to 16384, got 1e+18");
  const std::string name = dir.write("name.json", std::string(kModel) + R"(, "name": [1]})");
  expect_refused(run_cli(dir, {"plan", "--model", name}), "stepscope: error: " + name + ": field \"name\" must be a string of 1 to 256 characters");
  // An endless file used to be read until memory ran out (std::bad_alloc, abort).
  expect_refused(run_cli(dir, {"plan", "--model", "/dev/zero"}, kMemoryLimit),
                 "stepscope: error: /dev/zero: larger than 64 MiB, not a planner input");
  expect_refused(run_cli(dir, {"plan", "validate", "/dev/zero"}, kMemoryLimit),
                 "stepscope: error: /dev/zero: larger than 64 MiB, not a planner input");
  const std::string deep = dir.write("deep.json", std::string(100000, '['));
  expect_refused(run_cli(dir, {"plan", "--model", deep}), "stepscope: error: " + deep + ": nesting deeper than 64 levels");
}

TEST(AdversarialPlan, PlannerProfileWithBadNumbersIsAnError) {
  TempDir dir;
  const std::string huge = dir.write("p.json", R"({"gpu": "h100-sxm", "hbm_gbps": 1e309})");
  expect_refused(run_cli(dir, {"plan", "--model", "gpt3-125m", "--profile", huge}),
                 "stepscope: error: " + huge + ": field \"hbm_gbps\" holds a number out of range (1e309)");
  const std::string zero = dir.write("z.json", R"({"gpu": "h100-sxm", "gemm": [{"m": 8, "n": 8, "k": 8, "tflops": 0}]})");
  expect_refused(run_cli(dir, {"plan", "search", "--model", "gpt3-125m", "--gpus", "8", "--global-batch", "8", "--profile", zero}),
                 "stepscope: error: " + zero + ": field \"gemm[0].tflops\" must be a number from 0.001 to 1000000, got 0");
}

TEST(AdversarialPlan, AnalyzeProfileWithBadCeilingsIsAnError) {
  TempDir dir;
  const std::string trace = testing::source_dir() + "/examples/baseline_compiled/rank0.json.gz";
  const std::string bench = R"({"gpu": "h200-sxm", "stepscope_bench": {"schema_version": 1, "device": {"name": "NVIDIA H200"},
      "memory": [{"name": "hbm_copy", "bytes": 1e9, "seconds": 1e-3, "gbps": GBPS}]}})";
  for (const auto& [gbps, needle] : std::vector<std::pair<std::string, std::string>>{
           {"1e309", "field \"stepscope_bench.memory[0].gbps\" holds a number out of range (1e309)"},
           {"0", "field \"stepscope_bench.memory[0].gbps\" must be a number from 0.001 to 1000000, got 0"},
           {"-1", "field \"stepscope_bench.memory[0].gbps\" must be a number from 0.001 to 1000000, got -1"}}) {
    std::string text = bench;
    text.replace(text.find("GBPS"), 4, gbps);
    const std::string path = dir.write("bad.json", text);
    SCOPED_TRACE(gbps);
    expect_refused(run_cli(dir, {"analyze", "--profile", path, trace}), path + ": " + needle);
  }
}

// A file whose only row is bad: the row is named in a warning (skipped), then
// nothing is left to predict, which is the error.
void expect_only_row_skipped(const CliRun& r, const std::string& file, const std::string& needle) {
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(r.err_lines.size(), 2u) << joined(r.err_lines);
  EXPECT_EQ(r.err_lines[0].rfind("stepscope: warning: " + file + ": row 0 (line 2)", 0), 0u) << r.err_lines[0];
  EXPECT_NE(r.err_lines[0].find(needle), std::string::npos) << r.err_lines[0];
  EXPECT_EQ(r.err_lines[1], "stepscope: error: " + file + ": no row could be predicted (1 skipped)");
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(AdversarialPlan, ValidateCsvWithBadNumbersNamesRowAndColumn) {
  TempDir dir;
  const std::string header =
      "source,model,params_B,layers,hidden,heads,kv_heads,ffn_hidden,vocab,seq,gpu,n_gpu,tp,pp,dp,cp,vpp,global_batch,"
      "micro_batch,recompute,sequence_parallel,metric,value,flops_convention,step_seconds\n";
  const std::string tiny = dir.write(
      "tiny.csv", header + "S,GPT,22,48,6144,64,64,24576,51200,2048,A100-SXM4-80GB,8,8,1,1,1,1,4,4,full,no,step_seconds,1e-300,,\n");
  expect_only_row_skipped(run_cli(dir, {"plan", "validate", tiny}), tiny,
                          "column \"value\": expected a number from 1e-6 to 1e9, got \"1e-300\"");
  const std::string zero_tp = dir.write(
      "tp.csv", header + "S,GPT,22,48,6144,64,64,24576,51200,2048,A100-SXM4-80GB,8,0,1,1,1,1,4,4,full,no,step_seconds,1.4,,\n");
  expect_only_row_skipped(run_cli(dir, {"plan", "validate", zero_tp}), zero_tp, "tp (0) must be at least 1");
  // The optional columns of #28: a bad value names its column; the row is skipped.
  const std::string wide = header.substr(0, header.size() - 1) +
                           ",moe_experts,moe_topk,moe_capacity_factor,fp8_impl,reshard_after_forward,cuda_graphs\n";
  const std::string row = "S,GPT,22,48,6144,64,64,24576,51200,2048,A100-SXM4-80GB,8,8,1,1,1,1,4,4,full,no,step_seconds,1.4,,";
  const struct {
    const char* tail;
    const char* needle;
  } bad[] = {
      {",8,2,-1,,,", "column \"moe_capacity_factor\": expected a positive number up to 4096, got \"-1\""},
      {",8,2,1e9,,,", "column \"moe_capacity_factor\": expected a positive number up to 4096, got \"1e9\""},
      {",,,,nvte,,", "column \"fp8_impl\": expected auto, te or torchao, got \"nvte\""},
      {",,,,,maybe,", "column \"reshard_after_forward\": expected yes, no or unknown, got \"maybe\""},
      {",,,,,,2", "column \"cuda_graphs\": expected yes, no or unknown, got \"2\""},
  };
  for (const auto& b : bad) {
    SCOPED_TRACE(b.tail);
    const std::string file = dir.write("wide.csv", wide + row + b.tail + "\n");
    expect_only_row_skipped(run_cli(dir, {"plan", "validate", file}), file, b.needle);
  }
}

}  // namespace
}  // namespace stepscope::cli
