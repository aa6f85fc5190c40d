// Parameter counts of the presets against the published figures, and the
// model JSON reader.
#include "model/model_spec.h"

#include <gtest/gtest.h>

#include "trace/trace_fixtures.h"

namespace stepscope::model {

namespace {

int64_t params(const char* name) {
  const ModelSpec* m = find_model_preset(name);
  EXPECT_NE(m, nullptr) << name;
  return m ? m->total_params() : 0;
}

// Llama parameter counts as the released checkpoints report them (exact):
// Llama 2 7B 6,738,415,616 = 32 × (4·4096² + 3·4096·11008 + 2·4096) + 2·32000·4096 + 4096.
TEST(ModelSpec, LlamaCountsMatchReleasedCheckpoints) {
  EXPECT_EQ(params("llama2-7b"), 6738415616);
  // 80 × (2·8192² + 2·8192·1024 + 3·8192·28672 + 2·8192) + 2·32000·8192 + 8192
  EXPECT_EQ(params("llama2-70b"), 68976648192);
  EXPECT_EQ(params("llama3-8b"), 8030261248);
  EXPECT_EQ(params("llama3-70b"), 70553706496);
  // Dubey et al. 2024 call it 405B; the checkpoint has 405,853,388,800.
  EXPECT_EQ(params("llama3-405b"), 405853388800);
}

// GPT-3 175B (Brown et al. 2020): 96 × (12h² + 13h) + 50257·h + 2048·h + 2h
// with h = 12288 = 174,604,259,328 — the paper rounds to 175.0B.
TEST(ModelSpec, Gpt3175bWithinRoundingOfPaper) {
  EXPECT_EQ(params("gpt3-175b"), 174604259328);
  EXPECT_NEAR(params("gpt3-175b") / 175.0e9, 1.0, 0.005);
  EXPECT_NEAR(params("gpt3-6.7b") / 6.7e9, 1.0, 0.02);
  EXPECT_NEAR(params("gpt3-13b") / 13.0e9, 1.0, 0.02);
}

TEST(ModelSpec, GqaShrinksKeyValueProjections) {
  ModelSpec m = *find_model_preset("llama3-8b");
  // 2·4096² (Q, O) + 2·4096·(8·128) (K, V) + 3·4096·14336 + 2·4096
  EXPECT_EQ(m.layer_params(), 2 * 4096LL * 4096 + 2 * 4096LL * 1024 + 3 * 4096LL * 14336 + 2 * 4096);
}

TEST(ModelSpec, LoadsJsonWithDefaults) {
  testing::TempDir dir;
  std::string path =
      dir.write("m.json", R"({"name": "tiny", "layers": 2, "hidden": 64, "heads": 4, "vocab": 100, "seq": 32})");
  std::string error;
  auto m = load_model_json(path, error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->kv_heads, 4);
  EXPECT_EQ(m->ffn_hidden, 256);
  EXPECT_FALSE(m->gated_mlp);
  // 2 × (4·64² + 2·64·256 + 2·64) + 100·64 (embedding) + 100·64 (untied output) + 64
  EXPECT_EQ(m->total_params(), 2 * (4 * 64 * 64 + 2 * 64 * 256 + 128) + 6400 + 6400 + 64);
}

TEST(ModelSpec, JsonErrorsNameFileAndField) {
  testing::TempDir dir;
  std::string error;
  std::string missing = dir.write("a.json", R"({"layers": 2, "hidden": 64, "heads": 4, "vocab": 100})");
  EXPECT_FALSE(load_model_json(missing, error));
  EXPECT_EQ(error, missing + ": missing field \"seq\"");
  std::string bad = dir.write("b.json", R"({"layers": 2, "hidden": 64, "heads": 4, "vocab": 100, "seq": -1})");
  EXPECT_FALSE(load_model_json(bad, error));
  EXPECT_EQ(error, bad + ": field \"seq\" must be an integer from 1 to 16777216, got -1");
  std::string indivisible = dir.write("c.json", R"({"layers": 2, "hidden": 66, "heads": 4, "vocab": 100, "seq": 8})");
  EXPECT_FALSE(load_model_json(indivisible, error));
  EXPECT_EQ(error, indivisible + ": hidden (66) not divisible by heads (4)");
  std::string garbage = dir.write("d.json", "{not json");
  EXPECT_FALSE(load_model_json(garbage, error));
  EXPECT_TRUE(error.starts_with(garbage + ": not valid JSON (at byte ")) << error;
}

}  // namespace
}  // namespace stepscope::model
