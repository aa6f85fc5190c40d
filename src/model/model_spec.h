// The shape of a decoder-only transformer: what the memory and step-time
// models need to count parameters, FLOPs and activation bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stepscope::model {

struct ModelSpec {
  std::string name;
  int layers = 0;
  int hidden = 0;          // h
  int heads = 0;           // a (query heads)
  int kv_heads = 0;        // key/value heads; == heads for multi-head attention, < heads for GQA
  int ffn_hidden = 0;      // MLP inner width (4h for GPT, 8h/3-ish for Llama)
  bool gated_mlp = false;  // SwiGLU: the first MLP GEMM produces gate and up (2 × ffn_hidden)
  int vocab = 0;
  int seq = 0;                     // training sequence length s
  bool tied_embeddings = false;    // output projection shares the input embedding matrix
  bool learned_positions = false;  // GPT-style position table (seq × hidden); false for RoPE
  bool dropout = false;            // dropout layers present (keep 1-byte masks for backward)
  bool biases = false;             // linear layers and norms carry biases (GPT: LayerNorm + bias; Llama: RMSNorm, none)
  // Mixture of experts (every layer's MLP; Mixtral, GPT-OSS, Qwen3-MoE):
  // a router picks moe_topk of moe_experts expert MLPs per token. 0 or 1
  // experts: a dense MLP.
  int moe_experts = 0;
  int moe_topk = 0;
  int moe_ffn_hidden = 0;  // one expert's MLP width; 0: ffn_hidden
  // Shared experts (DeepSeek-V2/V3, Qwen-MoE; Megatron-Core
  // --moe-shared-expert-intermediate-size): an MLP of this width, the shared
  // experts' widths summed, that every token passes through beside its routed
  // experts. Replicated like attention, split by tp. 0: none.
  int moe_shared_ffn = 0;

  int head_dim() const { return heads > 0 ? hidden / heads : 0; }
  bool is_moe() const { return moe_experts > 1; }
  int expert_ffn() const { return moe_ffn_hidden > 0 ? moe_ffn_hidden : ffn_hidden; }
  // Parameters of one expert's MLP (of the dense MLP when not MoE).
  int64_t expert_params() const;
  // Parameters of the shared experts' MLP (0 without them).
  int64_t shared_expert_params() const;
  // Parameters of one transformer layer (attention + MLP or experts and router + norms).
  int64_t layer_params() const;
  // The part of a layer outside the routed experts (attention, norms, router, shared experts);
  // layer_params() without MoE.
  int64_t layer_dense_params() const;
  // Input embedding (+ position table); the output projection is separate.
  int64_t embedding_params() const;
  // Output projection (0 when tied) + final norm.
  int64_t output_params() const;
  int64_t total_params() const;
};

// The built-in models: GPT-3 family and Llama 2/3; names like "gpt3-175b", "llama3-70b".
const std::vector<ModelSpec>& model_presets();
const ModelSpec* find_model_preset(std::string_view name);

// The largest size each field may take (docs/planner.md "Model JSON"). They
// are far above any published model (Llama 3 405B: 126 layers, hidden 16384,
// ffn 53248, vocab 128256) and low enough that every count the planner takes
// in integers stays exact: parameters per model < 2^59 in int64, and the FLOP
// and byte counts (doubles) stay far below their range.
struct ModelLimits {
  static constexpr int kLayers = 1 << 14;     // 16384
  static constexpr int kHidden = 1 << 20;     // 1048576
  static constexpr int kHeads = 1 << 16;      // 65536, query and key/value heads
  static constexpr int kFfnHidden = 1 << 22;  // 4194304
  static constexpr int kVocab = 1 << 24;      // 16777216
  static constexpr int kSeq = 1 << 24;        // 16777216 tokens
  static constexpr int kExperts = 1 << 12;    // 4096 routed experts
  static constexpr double kParams = 576460752303423488.0;  // 2^59 parameters in all
};

// Reads a model JSON file:
// {"name"?, "layers", "hidden", "heads", "kv_heads"?, "ffn_hidden"?, "gated_mlp"?,
//  "vocab", "seq", "tied_embeddings"?, "learned_positions"?, "dropout"?, "biases"?,
//  "moe_experts"?, "moe_topk"?, "moe_ffn_hidden"?, "moe_shared_ffn"?}.
// On failure returns nullopt and sets `error` naming the file and field, e.g.
// "m.json: field \"layers\" must be an integer from 1 to 16384, got 1e+18".
std::optional<ModelSpec> load_model_json(const std::string& path, std::string& error);
// The same from the JSON text in memory; `where` names it in errors.
std::optional<ModelSpec> model_from_json_text(std::string_view text, const std::string& where, std::string& error);
// A model name (or another label printed in reports) the reader accepts:
// 1 to 256 bytes, no control characters (bytes below 0x20 and 0x7f), so it
// cannot move the cursor or split a one-line message.
bool is_printable_label(std::string_view s);

// Checks sizes in 1..ModelLimits, hidden % heads, heads % kv_heads, the
// experts (top-k from 1 to the experts) and the parameter count below
// ModelLimits::kParams; empty when fine.
std::string validate_model(const ModelSpec& m);

}  // namespace stepscope::model
