#include "model/model_spec.h"

#include "model/json_file.h"

#include <fmt/core.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <tuple>

namespace stepscope::model {

int64_t ModelSpec::expert_params() const {
  const int64_t h = hidden, f = expert_ffn();
  int64_t mlp = (gated_mlp ? 3 : 2) * h * f;  // (gate,) up, down
  if (biases) mlp += (gated_mlp ? 2 : 1) * f + h;
  return mlp;
}

int64_t ModelSpec::shared_expert_params() const {
  if (!is_moe() || moe_shared_ffn <= 0) return 0;
  const int64_t h = hidden, f = moe_shared_ffn;
  return (gated_mlp ? 3 : 2) * h * f + (biases ? (gated_mlp ? 2 : 1) * f + h : 0);
}

int64_t ModelSpec::layer_dense_params() const {
  const int64_t h = hidden, kv = static_cast<int64_t>(kv_heads) * head_dim();
  int64_t attention = h * h + 2 * h * kv + h * h;  // Wq, Wk, Wv, Wo
  int64_t norms = 2 * h;                           // two norm scales
  if (biases) {
    attention += h + 2 * kv + h;
    norms += 2 * h;  // LayerNorm shifts
  }
  const int64_t router = is_moe() ? h * moe_experts : 0;
  return attention + norms + router + (is_moe() ? shared_expert_params() : expert_params());
}

int64_t ModelSpec::layer_params() const {
  return layer_dense_params() + (is_moe() ? static_cast<int64_t>(moe_experts) * expert_params() : 0);
}

int64_t ModelSpec::embedding_params() const {
  return static_cast<int64_t>(vocab) * hidden + (learned_positions ? static_cast<int64_t>(seq) * hidden : 0);
}

int64_t ModelSpec::output_params() const {
  int64_t final_norm = (biases ? 2 : 1) * static_cast<int64_t>(hidden);
  return (tied_embeddings ? 0 : static_cast<int64_t>(vocab) * hidden) + final_norm;
}

int64_t ModelSpec::total_params() const {
  return static_cast<int64_t>(layers) * layer_params() + embedding_params() + output_params();
}

namespace {

// GPT-3: Brown et al. 2020, "Language Models are Few-Shot Learners", Table
// 2.1 (layers, d_model, heads, context 2048) with the GPT-2 BPE vocabulary of
// 50257 tokens, ffn = 4·d_model, learned positions, tied embeddings. Two rows
// of that table are not self-consistent (1.3B: 24 heads × 128 ≠ 2048; 13B:
// d_model 5140 is not 40 × 128): here d_model / d_head decide (16 heads, 5120).
ModelSpec gpt3(const char* name, int layers, int hidden, int heads) {
  ModelSpec m;
  m.name = name;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = m.kv_heads = heads;
  m.ffn_hidden = 4 * hidden;
  m.vocab = 50257;
  m.seq = 2048;
  m.tied_embeddings = m.learned_positions = m.dropout = m.biases = true;
  return m;
}

// Llama 2: Touvron et al. 2023, "Llama 2", Table 1 (context 4096, GQA for
// 70B) and the released configs (vocab 32000; ffn 11008 / 13824 / 28672; 70B:
// 64 heads, 8 KV heads). Llama 3: Dubey et al. 2024, "The Llama 3 Herd of
// Models", Table 3 (8B: 32 layers, 4096, ffn 14336; 70B: 80, 8192, 28672;
// 405B: 126, 16384, 53248; 8 KV heads, vocab 128000 + 256 special = 128256,
// pre-training context 8192). SwiGLU, RoPE, RMSNorm, no biases, untied.
ModelSpec llama(const char* name, int layers, int hidden, int heads, int kv_heads, int ffn, int vocab, int seq) {
  ModelSpec m;
  m.name = name;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn;
  m.gated_mlp = true;
  m.vocab = vocab;
  m.seq = seq;
  return m;
}

}  // namespace

const std::vector<ModelSpec>& model_presets() {
  static const std::vector<ModelSpec> presets = {
      gpt3("gpt3-125m", 12, 768, 12),
      gpt3("gpt3-350m", 24, 1024, 16),
      gpt3("gpt3-760m", 24, 1536, 16),
      gpt3("gpt3-1.3b", 24, 2048, 16),
      gpt3("gpt3-2.7b", 32, 2560, 32),
      gpt3("gpt3-6.7b", 32, 4096, 32),
      gpt3("gpt3-13b", 40, 5120, 40),
      gpt3("gpt3-175b", 96, 12288, 96),
      llama("llama2-7b", 32, 4096, 32, 32, 11008, 32000, 4096),
      llama("llama2-13b", 40, 5120, 40, 40, 13824, 32000, 4096),
      llama("llama2-70b", 80, 8192, 64, 8, 28672, 32000, 4096),
      llama("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192),
      llama("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192),
      llama("llama3-405b", 126, 16384, 128, 8, 53248, 128256, 8192),
  };
  return presets;
}

const ModelSpec* find_model_preset(std::string_view name) {
  for (const auto& m : model_presets())
    if (m.name == name) return &m;
  return nullptr;
}

bool is_printable_label(std::string_view s) {
  if (s.empty() || s.size() > 256) return false;
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

std::string validate_model(const ModelSpec& m) {
  for (auto [name, v, max] : {std::tuple{"layers", m.layers, ModelLimits::kLayers},
                              {"hidden", m.hidden, ModelLimits::kHidden},
                              {"heads", m.heads, ModelLimits::kHeads},
                              {"kv_heads", m.kv_heads, ModelLimits::kHeads},
                              {"ffn_hidden", m.ffn_hidden, ModelLimits::kFfnHidden},
                              {"vocab", m.vocab, ModelLimits::kVocab},
                              {"seq", m.seq, ModelLimits::kSeq}}) {
    if (v <= 0) return fmt::format("{} must be positive", name);
    if (v > max) return fmt::format("{} ({}) must be at most {}", name, v, max);
  }
  if (m.hidden % m.heads != 0) return fmt::format("hidden ({}) not divisible by heads ({})", m.hidden, m.heads);
  if (m.heads % m.kv_heads != 0) return fmt::format("heads ({}) not divisible by kv_heads ({})", m.heads, m.kv_heads);
  if (m.moe_experts < 0 || m.moe_experts > ModelLimits::kExperts)
    return fmt::format("moe_experts ({}) must be from 0 to {}", m.moe_experts, ModelLimits::kExperts);
  if (m.moe_ffn_hidden < 0 || m.moe_ffn_hidden > ModelLimits::kFfnHidden)
    return fmt::format("moe_ffn_hidden ({}) must be from 0 to {}", m.moe_ffn_hidden, ModelLimits::kFfnHidden);
  if (m.is_moe() && (m.moe_topk < 1 || m.moe_topk > m.moe_experts))
    return fmt::format("moe_topk ({}) must be from 1 to moe_experts ({})", m.moe_topk, m.moe_experts);
  if (!m.is_moe() && m.moe_topk > 1) return fmt::format("moe_topk ({}) needs moe_experts > 1", m.moe_topk);
  if (m.moe_shared_ffn < 0 || m.moe_shared_ffn > ModelLimits::kFfnHidden)
    return fmt::format("moe_shared_ffn ({}) must be from 0 to {}", m.moe_shared_ffn, ModelLimits::kFfnHidden);
  if (!m.is_moe() && m.moe_shared_ffn > 0)
    return fmt::format("moe_shared_ffn ({}) needs moe_experts > 1", m.moe_shared_ffn);
  // Counted in doubles first: every integer count the planner takes stays exact below 2^59.
  const double h = m.hidden, f = std::max(m.ffn_hidden, m.moe_ffn_hidden);
  const double per_layer = 4 * h * h + 3 * h * f * std::max(1, m.moe_experts) + 3 * h * m.moe_shared_ffn +
                           h * std::max(1, m.moe_experts) + 8 * h;
  if (m.layers * per_layer + 2.0 * m.vocab * h + static_cast<double>(m.seq) * h > ModelLimits::kParams)
    return fmt::format("{} layers of this width and {} experts exceed 2^59 parameters", m.layers, m.moe_experts);
  return "";
}

namespace {

// The JSON value as it would print, cut short: for error messages.
std::string shown(const nlohmann::json& v) {
  std::string s = v.dump();
  return s.size() > 40 ? s.substr(0, 40) + "..." : s;
}

std::optional<ModelSpec> model_from_json(const nlohmann::json& j, const std::string& where, std::string& error) {
  if (!j.is_object()) {
    error = fmt::format("{}: expected a JSON object", where);
    return std::nullopt;
  }
  ModelSpec m;
  m.name = where;
  if (auto it = j.find("name"); it != j.end()) {
    if (!it->is_string() || !is_printable_label(it->get<std::string>())) {
      error = field_error(where, "name", "must be a string of 1 to 256 characters without control characters");
      return std::nullopt;
    }
    m.name = it->get<std::string>();
  }
  auto read_int = [&](const char* key, int& out, int max, bool required) {
    auto it = j.find(key);
    if (it == j.end()) {
      if (required) error = fmt::format("{}: missing field \"{}\"", where, key);
      return !required;
    }
    // An integer literal only: 4096.0 or 1e3 is refused rather than rounded.
    const bool in_range = (it->is_number_unsigned() && it->get<uint64_t>() <= static_cast<uint64_t>(max) &&
                           it->get<uint64_t>() >= 1) ||
                          (it->is_number_integer() && it->get<int64_t>() >= 1 && it->get<int64_t>() <= max);
    if (!in_range) {
      error = field_error(where, key, fmt::format("must be an integer from 1 to {}, got {}", max, shown(*it)));
      return false;
    }
    out = static_cast<int>(it->get<int64_t>());
    return true;
  };
  auto read_bool = [&](const char* key, bool& out) {
    auto it = j.find(key);
    if (it == j.end()) return true;
    if (!it->is_boolean()) {
      error = field_error(where, key, fmt::format("must be true or false, got {}", shown(*it)));
      return false;
    }
    out = it->get<bool>();
    return true;
  };
  using L = ModelLimits;
  if (!read_int("layers", m.layers, L::kLayers, true) || !read_int("hidden", m.hidden, L::kHidden, true) ||
      !read_int("heads", m.heads, L::kHeads, true) || !read_int("vocab", m.vocab, L::kVocab, true) ||
      !read_int("seq", m.seq, L::kSeq, true))
    return std::nullopt;
  m.kv_heads = m.heads;
  m.ffn_hidden = 4 * m.hidden;  // ≤ 2^22: hidden ≤ 2^20
  if (!read_int("kv_heads", m.kv_heads, L::kHeads, false) || !read_int("ffn_hidden", m.ffn_hidden, L::kFfnHidden, false) ||
      !read_bool("gated_mlp", m.gated_mlp) || !read_bool("tied_embeddings", m.tied_embeddings) ||
      !read_bool("learned_positions", m.learned_positions) || !read_bool("dropout", m.dropout) ||
      !read_bool("biases", m.biases) || !read_int("moe_experts", m.moe_experts, L::kExperts, false) ||
      !read_int("moe_topk", m.moe_topk, L::kExperts, false) ||
      !read_int("moe_ffn_hidden", m.moe_ffn_hidden, L::kFfnHidden, false) ||
      !read_int("moe_shared_ffn", m.moe_shared_ffn, L::kFfnHidden, false))
    return std::nullopt;
  if (std::string bad = validate_model(m); !bad.empty()) {
    error = fmt::format("{}: {}", where, bad);
    return std::nullopt;
  }
  return m;
}

}  // namespace

std::optional<ModelSpec> model_from_json_text(std::string_view text, const std::string& where, std::string& error) {
  std::optional<nlohmann::json> doc = parse_json_text(text, where, error);
  if (!doc) return std::nullopt;
  return model_from_json(*doc, where, error);
}

std::optional<ModelSpec> load_model_json(const std::string& path, std::string& error) {
  std::optional<nlohmann::json> doc = read_json_file(path, error);
  if (!doc) return std::nullopt;
  return model_from_json(*doc, path, error);
}

}  // namespace stepscope::model
