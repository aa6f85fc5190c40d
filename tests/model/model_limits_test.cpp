// The model reader's limits: every field an integer in its documented range,
// so that the parameter, FLOP and byte counts the planner derives stay exact
// and finite (docs/planner.md "Model JSON").
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "model/hardware_profile_json.h"
#include "model/memory_model.h"
#include "model/model_spec.h"
#include "model/step_time_model.h"
#include "trace/trace_fixtures.h"

namespace stepscope::model {

namespace {

std::string model_json(const std::string& override_fields) {
  return R"({"name": "t", "layers": 2, "hidden": 64, "heads": 4, "vocab": 100, "seq": 8)" +
         (override_fields.empty() ? std::string() : ", " + override_fields) + "}";
}

std::string read_error(const std::string& fields) {
  std::string error;
  auto m = model_from_json_text(model_json(fields), "m.json", error);
  EXPECT_FALSE(m) << fields;
  return error;
}

TEST(ModelLimits, HugeNumberLiteralIsAnError) {
  testing::TempDir dir;
  std::string path = dir.write("m.json", model_json(R"("layers": 1e309)"));
  std::string error;
  EXPECT_FALSE(load_model_json(path, error));  // used to end in std::terminate
  EXPECT_EQ(error, path + ": field \"layers\" holds a number out of range (1e309)");
}

TEST(ModelLimits, FieldsOutsideTheirRangeNameFieldAndValue) {
  EXPECT_EQ(read_error(R"("layers": 1e18)"), "m.json: field \"layers\" must be an integer from 1 to 16384, got 1e+18");
  EXPECT_EQ(read_error(R"("layers": 16385)"), "m.json: field \"layers\" must be an integer from 1 to 16384, got 16385");
  EXPECT_EQ(read_error(R"("hidden": 0)"), "m.json: field \"hidden\" must be an integer from 1 to 1048576, got 0");
  EXPECT_EQ(read_error(R"("seq": -8)"), "m.json: field \"seq\" must be an integer from 1 to 16777216, got -8");
  EXPECT_EQ(read_error(R"("vocab": 18446744073709551615)"),
            "m.json: field \"vocab\" must be an integer from 1 to 16777216, got 18446744073709551615");
  EXPECT_EQ(read_error(R"("ffn_hidden": 4096.5)"),
            "m.json: field \"ffn_hidden\" must be an integer from 1 to 4194304, got 4096.5");
  EXPECT_EQ(read_error(R"("kv_heads": "4")"), "m.json: field \"kv_heads\" must be an integer from 1 to 65536, got \"4\"");
  EXPECT_EQ(read_error(R"("dropout": 1)"), "m.json: field \"dropout\" must be true or false, got 1");
}

TEST(ModelLimits, NonStringNameIsAnError) {
  // j.value("name", path) used to throw type_error here.
  const std::string what = "must be a string of 1 to 256 characters without control characters";
  EXPECT_EQ(read_error(R"("name": 5)"), "m.json: field \"name\" " + what);
  // Printed in the report: an escape sequence would reach the terminal.
  EXPECT_EQ(read_error(R"("name": "x\u001b[2Jy")"), "m.json: field \"name\" " + what);
  EXPECT_EQ(read_error(R"("name": "a\nb")"), "m.json: field \"name\" " + what);
  EXPECT_EQ(read_error("\"name\": \"" + std::string(257, 'n') + "\""), "m.json: field \"name\" " + what);
}

// The old limit (2^24 on every field) let 2^24 layers of hidden 2^24 through:
// 2^24 × 4·2^48 parameters overflow int64.
TEST(ModelLimits, OldLimitsOverflowedTheParameterCount) {
  std::string error;
  EXPECT_FALSE(model_from_json_text(
      R"({"layers": 16777216, "hidden": 16777216, "heads": 1, "vocab": 16777216, "seq": 16777216})", "m.json", error));
  EXPECT_EQ(error, "m.json: field \"layers\" must be an integer from 1 to 16384, got 16777216");
}

bool finite_nonnegative(double v) { return std::isfinite(v) && v >= 0; }

// At every limit at once the counts stay exact and every estimate finite.
TEST(ModelLimits, ModelAtTheLimitsGivesFiniteEstimates) {
  ModelSpec m;
  m.name = "limits";
  m.layers = ModelLimits::kLayers;
  m.hidden = ModelLimits::kHidden;
  m.heads = m.kv_heads = ModelLimits::kHeads;
  m.ffn_hidden = ModelLimits::kFfnHidden;
  m.vocab = ModelLimits::kVocab;
  m.seq = ModelLimits::kSeq;
  m.gated_mlp = m.biases = m.learned_positions = m.dropout = true;
  ASSERT_EQ(validate_model(m), "");
  const double h = m.hidden, f = m.ffn_hidden, L = m.layers;
  // Exact in int64, and equal to the same sum in doubles (all terms < 2^53 except the product).
  const double expected = L * (4 * h * h + 3 * h * f + (2 * h + 2 * h + 2 * f + h) + 4 * h) + (m.vocab + double(m.seq)) * h +
                          m.vocab * h + 2 * h;
  EXPECT_GT(m.total_params(), 0);
  EXPECT_LT(m.total_params(), int64_t{1} << 59);
  EXPECT_DOUBLE_EQ(static_cast<double>(m.total_params()), expected);

  TrainingSettings t;
  t.global_batch = 1 << 24;
  t.attention = AttentionKernel::kUnfused;  // the s² scores: the largest activation term
  ClusterSpec c{*find_gpu("h100-sxm"), 1, {}};
  ParallelConfig p;
  const MemoryEstimate mem = estimate_memory(m, t, c, p);
  for (double v : {mem.weights, mem.gradients, mem.optimizer, mem.activations, mem.temporary, mem.total})
    EXPECT_TRUE(finite_nonnegative(v)) << v;
  EXPECT_FALSE(mem.fits);
  const StepEstimate s = estimate_step(m, t, c, p);
  for (double v : {s.model_flops, s.hardware_flops, s.compute_fwd, s.compute_bwd, s.attention, s.total, s.mfu})
    EXPECT_TRUE(finite_nonnegative(v)) << v;
  EXPECT_GT(s.total, 0);

  // The same on the slowest hardware profile the reader accepts (every rate 0.001).
  std::string error;
  auto slow = hardware_profile_from_json_text(
      R"({"gpu": "h100-sxm", "hbm_gbps": 0.001, "nccl": {"intra_node_busbw_gbps": 0.001, "inter_node_busbw_gbps": 0.001},
          "gemm": [{"m": 1, "n": 1, "k": 1, "tflops": 0.001}]})",
      "slow.json", error);
  ASSERT_TRUE(slow) << error;
  slow->gpus = 1;
  const StepEstimate slow_step = estimate_step(m, t, *slow, p);
  for (double v : {slow_step.compute_fwd, slow_step.compute_bwd, slow_step.attention, slow_step.embedding_and_loss,
                   slow_step.optimizer, slow_step.total})
    EXPECT_TRUE(finite_nonnegative(v)) << v;
  EXPECT_GT(slow_step.total, s.total);
}

TEST(ModelLimits, PresetsAreInsideTheLimits) {
  for (const ModelSpec& m : model_presets()) EXPECT_EQ(validate_model(m), "") << m.name;
}

}  // namespace
}  // namespace stepscope::model
