#include "plan/plan_validation.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <sstream>

#include "model/gpu_lookup.h"
#include "model/json_file.h"
#include "model/memory_model.h"
#include "model/plan_constraints.h"
#include "model/step_time_model.h"

namespace stepscope::plan {

// The specs and cost models of the model layer (src/model/).
using namespace model;
namespace {

// One CSV record: comma-separated, fields optionally in double quotes ("" escapes a quote).
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"')
        out.back() += '"', ++i;
      else if (ch == '"')
        quoted = false;
      else
        out.back() += ch;
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.emplace_back();
    } else if (ch != '\r') {
      out.back() += ch;
    }
  }
  return out;
}

bool parse_int(const std::string& s, int& out) {
  if (s.empty()) return false;
  size_t used = 0;
  try {
    long long v = std::stoll(s, &used);
    if (used != s.size() || v < 0 || v > (1LL << 24)) return false;
    out = static_cast<int>(v);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

// Measured values (seconds, milliseconds, TFLOP/s) lie in [1e-6, 1e9]: far
// outside any training run, and inside the range where the relative error
// (predicted - measured) / measured stays finite.
constexpr double kMinMeasured = 1e-6, kMaxMeasured = 1e9;

bool parse_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  size_t used = 0;
  try {
    out = std::stod(s, &used);
  } catch (const std::exception&) {
    return false;
  }
  return used == s.size() && std::isfinite(out) && out >= kMinMeasured && out <= kMaxMeasured;
}

bool is_ampere(const std::string& gpu) {
  const GpuSpec* g = find_gpu(gpu);
  return g && g->name.rfind("a100", 0) == 0;
}

}  // namespace

namespace {

// What a row may leave `unknown`, resolved to the default of the framework it
// names (docs/planner.md, "Validation": each default with its source).
struct FrameworkDefaults {
  const char* name;
  Recompute recompute;
  bool sequence_parallel_with_tp;  // sequence parallelism whenever tp > 1
  Sharding sharding;
  Stack stack;  // whose memory conventions the row runs with (training_settings.h)
  // With pipelining, a step's micro-batches per replica equal pp unless set
  // (torchtitan: pipeline_parallel_microbatches defaults to the PP degree).
  bool micro_batches_equal_pp = false;
  // The attention kernel it runs on Hopper-class GPUs when the row does not say.
  AttentionKernel attention = AttentionKernel::kFlash;
  // Who casts fp8 GEMM operands (the stack's unless said).
  Fp8Impl fp8_impl = Fp8Impl::kAuto;
  // FSDP1's flat parameters rather than FSDP2's per-parameter sharding.
  bool fsdp_flat_params = false;
};

constexpr FrameworkDefaults kFrameworks[] = {
    // Megatron-LM: --recompute-granularity and --sequence-parallel are off
    // unless given; without --use-distributed-optimizer gradients are
    // all-reduced with replicated optimizer states (DDP).
    {"megatron", Recompute::kNone, false, Sharding::kDdp, Stack::kMegatron},
    // NeMo 2 and Megatron-Bridge recipes: Megatron-Core underneath, with the
    // distributed optimizer on in their optimizer configs (ZeRO-1).
    {"nemo", Recompute::kNone, false, Sharding::kZero1, Stack::kMegatron},
    {"megatron-bridge", Recompute::kNone, false, Sharding::kZero1, Stack::kMegatron},
    // torchtitan: the shipped Llama 3 training configs checkpoint per
    // operator (mode = "selective", selective_ac_option = "op"); its
    // tensor-parallel plan always shards the norms along the sequence
    // (SequenceParallel); data parallelism is FSDP2 by default; compile off.
    // Attention through PyTorch SDPA, whose fixed priority puts the
    // FlashAttention-2 backend first (pytorch/pytorch#138907).
    {"torchtitan", Recompute::kOp, true, Sharding::kZero3, Stack::kPytorch, true, AttentionKernel::kFlash2},
    // llm-foundry: activation_checkpointing off and FULL_SHARD unless the
    // fsdp_config says otherwise; no tensor parallelism.
    // Its MPT attention: the flash-attn 2 package (attn_impl: flash); fp8
    // (Composer's amp_fp8) through Transformer Engine's fused casts;
    // Composer's FSDP is FSDP1 (flat parameters).
    {"llm-foundry", Recompute::kNone, false, Sharding::kZero3, Stack::kPytorch, false, AttentionKernel::kFlash2,
     Fp8Impl::kTransformerEngine, true},
    // PyTorch / Hugging Face Trainer loops: no checkpointing
    // (gradient_checkpointing=False), no TP, DDP. Plain PyTorch: SDPA's
    // FlashAttention-2 first; Hugging Face transformers prefers cuDNN's
    // attention on Hopper (huggingface/transformers#48163, 2026-08; the
    // project's H200 runs recorded cuDNN).
    {"pytorch", Recompute::kNone, false, Sharding::kDdp, Stack::kPytorch, false, AttentionKernel::kFlash2},
    {"hf", Recompute::kNone, false, Sharding::kDdp, Stack::kPytorch, false, AttentionKernel::kFlash},
};

const FrameworkDefaults* find_framework(const std::string& name) {
  for (const auto& f : kFrameworks)
    if (name == f.name) return &f;
  return nullptr;
}

std::string framework_names() {
  std::string out;
  for (const auto& f : kFrameworks) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

std::optional<ParsedRows> parse_validation_csv(const std::string& text, const ValidationOptions& o,
                                               std::string& error) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) {
    error = "empty file: expected a header row";
    return std::nullopt;
  }
  std::map<std::string, size_t> col;
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // UTF-8 byte-order mark
  auto header = split_csv(line);
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* need : {"source",   "model",        "layers",      "hidden",    "heads",
                           "kv_heads", "ffn_hidden",   "vocab",       "seq",       "gpu",
                           "n_gpu",    "tp",           "pp",          "dp",        "cp",
                           "vpp",      "global_batch", "micro_batch", "recompute", "sequence_parallel",
                           "metric",   "value",        "step_seconds"})
    if (!col.count(need)) {
      error = fmt::format("header: missing column \"{}\"", need);
      return std::nullopt;
    }
  ParsedRows parsed;
  int line_no = 1, index = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r") continue;
    auto f = split_csv(line);
    ValidationRow r;
    r.index = index++;
    r.line = line_no;
    std::string reason;  // set by the first check that fails
    auto at = [&](const char* c) { return fmt::format("row {} (line {}), column \"{}\"", r.index, line_no, c); };
    auto fail = [&](const char* c, const std::string& message) {
      reason = c ? at(c) + ": " + message : fmt::format("row {} (line {}): {}", r.index, line_no, message);
      return false;
    };
    auto has = [&](const char* c) { return col.count(c) > 0; };
    auto field = [&](const char* c) -> std::string {
      auto it = col.find(c);
      return it != col.end() && it->second < f.size() ? f[it->second] : std::string();
    };
    auto integer = [&](const char* c, int& out) {
      return parse_int(field(c), out) || fail(c, fmt::format("expected a non-negative integer, got \"{}\"", field(c)));
    };
    // A yes/no column that may say `unknown`; nullopt then.
    auto yes_no = [&](const char* c, std::optional<bool>& out) {
      const std::string v = field(c);
      if (v == "unknown") return out.reset(), true;
      if (v == "yes" || v == "no") return out = v == "yes", true;
      return fail(c, fmt::format("expected yes, no or unknown, got \"{}\"", v));
    };
    auto parse_row = [&]() -> bool {
      if (f.size() < header.size())
        return fail(nullptr, fmt::format("{} columns, header has {}", f.size(), header.size()));
      r.source = field("source");
      ModelSpec& m = r.model;
      m.name = field("model");
      for (const char* label : {"source", "model", "gpu"})
        if (!is_printable_label(field(label)) && !(field(label).empty() && label == std::string_view("source")))
          return fail(label, "expected 1 to 256 characters without control characters");
      if (!integer("layers", m.layers) || !integer("hidden", m.hidden) || !integer("heads", m.heads) ||
          !integer("kv_heads", m.kv_heads) || !integer("ffn_hidden", m.ffn_hidden) || !integer("vocab", m.vocab) ||
          !integer("seq", m.seq) || !integer("n_gpu", r.n_gpu) || !integer("tp", r.parallel.tp) ||
          !integer("pp", r.parallel.pp) || !integer("dp", r.parallel.dp) || !integer("cp", r.parallel.cp) ||
          !integer("vpp", r.parallel.vpp) || !integer("global_batch", r.settings.global_batch))
        return false;
      // GPT-style rows (ffn = 4h) have a GeLU MLP, biases, dropout, learned
      // positions and tied embeddings; any other width is a SwiGLU/RoPE model
      // (Llama family). A "gated_mlp" column, when present, decides instead.
      m.gated_mlp = m.ffn_hidden != 4 * m.hidden;
      if (has("gated_mlp")) {
        std::string g = field("gated_mlp");
        if (g != "yes" && g != "no") return fail("gated_mlp", fmt::format("expected yes or no, got \"{}\"", g));
        m.gated_mlp = g == "yes";
      }
      m.dropout = m.biases = m.learned_positions = m.tied_embeddings = !m.gated_mlp;
      if (has("tied_embeddings") && !field("tied_embeddings").empty()) {
        std::string v = field("tied_embeddings");
        if (v != "yes" && v != "no") return fail("tied_embeddings", fmt::format("expected yes or no, got \"{}\"", v));
        m.tied_embeddings = v == "yes";
      }
      if (std::string bad = validate_model(m); !bad.empty()) return fail(nullptr, bad);
      r.gpu = field("gpu");
      r.framework = lower(field("framework"));
      const FrameworkDefaults* framework = find_framework(r.framework);
      auto needs_framework = [&](const char* c) {
        return fail(c, r.framework.empty()
                           ? fmt::format("unknown needs a framework column naming one of {}", framework_names())
                           : fmt::format("unknown: no documented default for framework \"{}\" ({})", r.framework,
                                         framework_names()));
      };
      std::string mb = field("micro_batch");
      const int replica_batch = r.parallel.dp > 0 ? r.settings.global_batch / r.parallel.dp : 0;
      if (mb == "unknown" && framework && framework->micro_batches_equal_pp && r.parallel.pp > 1 &&
          replica_batch % r.parallel.pp == 0 && replica_batch >= r.parallel.pp) {
        r.parallel.micro_batch = replica_batch / r.parallel.pp;
      } else if (mb == "unknown") {
        r.micro_batch_known = false;
        r.parallel.micro_batch = 1;
      } else if (!integer("micro_batch", r.parallel.micro_batch)) {
        return false;
      }
      if (field("recompute") == "unknown") {
        if (!framework) return needs_framework("recompute");
        r.parallel.recompute = framework->recompute;
      } else if (!parse_recompute(field("recompute"), r.parallel.recompute)) {
        return fail("recompute",
                    fmt::format("expected none, selective, full, op or unknown, got \"{}\"", field("recompute")));
      }
      if (framework) {
        r.settings.stack = framework->stack;
        r.settings.fp8_impl = framework->fp8_impl;
        r.settings.fsdp_flat_params = framework->fsdp_flat_params;
      }
      if (has("torch_compile") && !field("torch_compile").empty()) {
        std::optional<bool> compiled;
        if (!yes_no("torch_compile", compiled)) return false;
        r.settings.compiled = compiled.value_or(false);  // every framework above compiles only when asked
        // torch.compile runs on PyTorch's own modules: a framework the table
        // does not know is of the PyTorch stack when it compiles.
        if (r.settings.compiled && !framework) r.settings.stack = Stack::kPytorch;
        if (r.settings.compiled && r.settings.stack != Stack::kPytorch)
          return fail("torch_compile", "yes needs a framework of the pytorch stack (torchtitan, llm-foundry, pytorch, hf)");
      }
      if (has("tp_overlap") && !field("tp_overlap").empty()) {
        std::optional<bool> overlap;
        if (!yes_no("tp_overlap", overlap)) return false;
        r.settings.tp_comm_overlap = overlap.value_or(false);
      }
      if (has("fsdp_flat_params") && !field("fsdp_flat_params").empty()) {
        std::optional<bool> flat;
        if (!yes_no("fsdp_flat_params", flat)) return false;
        if (flat) r.settings.fsdp_flat_params = *flat;
      }
      if (has("reshard_after_forward") && !field("reshard_after_forward").empty()) {
        std::optional<bool> reshard;
        if (!yes_no("reshard_after_forward", reshard)) return false;
        r.settings.reshard_after_forward = reshard.value_or(true);
      }
      if (has("cuda_graphs") && !field("cuda_graphs").empty()) {
        std::optional<bool> graphs;
        if (!yes_no("cuda_graphs", graphs)) return false;
        r.settings.cuda_graphs = graphs.value_or(false);
      }
      if (has("fp8_all_gather") && !field("fp8_all_gather").empty()) {
        std::optional<bool> fp8_gather;
        if (!yes_no("fp8_all_gather", fp8_gather)) return false;
        r.settings.fp8_all_gather = fp8_gather.value_or(false);
      }
      if (has("fp8_impl") && !field("fp8_impl").empty() && !parse_fp8_impl(field("fp8_impl"), r.settings.fp8_impl))
        return fail("fp8_impl", fmt::format("expected auto, te or torchao, got \"{}\"", field("fp8_impl")));
      if (has("optimizer_impl") && !field("optimizer_impl").empty() &&
          !parse_optimizer_impl(field("optimizer_impl"), r.settings.optimizer_impl))
        return fail("optimizer_impl", fmt::format("expected auto, foreach or fused, got \"{}\"", field("optimizer_impl")));
      std::optional<bool> sp;
      if (!yes_no("sequence_parallel", sp)) return false;
      if (!sp && !framework) return needs_framework("sequence_parallel");
      r.parallel.sequence_parallel = sp ? *sp : framework->sequence_parallel_with_tp && r.parallel.tp > 1;
      if (has("sharding") && !field("sharding").empty()) {
        const std::string sh = field("sharding");
        if (sh == "unknown") {
          if (!framework) return needs_framework("sharding");
          r.parallel.sharding = framework->sharding;
        } else if (!parse_sharding(sh, r.parallel.sharding)) {
          return fail("sharding", fmt::format("expected ddp, zero1, zero2, zero3, fsdp, hsdp or unknown, got \"{}\"", sh));
        }
      }
      const bool megatron_gpt_era = !m.gated_mlp && m.kv_heads == m.heads && is_ampere(r.gpu);
      r.settings.attention = o.attention.value_or(
          megatron_gpt_era ? AttentionKernel::kUnfused : framework ? framework->attention : AttentionKernel::kFlash);
      r.settings.overlap_dp_comm = o.overlap_dp_comm.value_or(!megatron_gpt_era);
      r.settings.dtype = o.dtype.value_or(megatron_gpt_era ? Dtype::kFp16 : Dtype::kBf16);
      if (has("attention") && !field("attention").empty() && !parse_attention(field("attention"), r.settings.attention))
        return fail("attention", fmt::format("expected flash, fa2 or unfused, got \"{}\"", field("attention")));
      if (has("dtype") && !field("dtype").empty() && !parse_dtype(field("dtype"), r.settings.dtype)) {
        return fail("dtype", fmt::format("expected bf16, fp16, fp8, mxfp8 or nvfp4, got \"{}\"", field("dtype")));
      }
      // Columns of layouts the models do not express yet: the row is skipped
      // rather than predicted as something it is not.
      int n = 0;
      // MoE: every layer's MLP routed to moe_topk of moe_experts experts of
      // ffn_hidden width (the published per-expert width); ep of them per group.
      if (has("moe_experts") && !field("moe_experts").empty() && !integer("moe_experts", m.moe_experts)) return false;
      if (has("moe_topk") && !field("moe_topk").empty() && !integer("moe_topk", m.moe_topk)) return false;
      if (has("moe_shared_ffn") && !field("moe_shared_ffn").empty() && !integer("moe_shared_ffn", m.moe_shared_ffn))
        return false;
      if (has("ep") && !field("ep").empty() && !integer("ep", r.parallel.ep)) return false;
      if (has("attention_density") && !field("attention_density").empty()) {
        double density = 0;
        if (!parse_double(field("attention_density"), density) || density > 1)
          return fail("attention_density",
                      fmt::format("expected a share above 0 and at most 1, got \"{}\"", field("attention_density")));
        r.settings.attention_density = density;
      }
      if (has("moe_capacity_factor") && !field("moe_capacity_factor").empty()) {
        double factor = 0;
        if (!parse_double(field("moe_capacity_factor"), factor) || factor > ModelLimits::kExperts)
          return fail("moe_capacity_factor",
                      fmt::format("expected a positive number up to {}, got \"{}\"", ModelLimits::kExperts,
                                  field("moe_capacity_factor")));
        r.settings.moe_capacity_factor = factor;
      }
      if (r.parallel.ep < 1) return fail("ep", "must be at least 1");
      if (std::string bad = validate_model(m); !bad.empty()) return fail(nullptr, bad);
      // Stage sizes and partial recomputation: read here, checked with the
      // layout (plan_constraints) like every other size.
      if (has("first_stage_layers") && !field("first_stage_layers").empty() &&
          !integer("first_stage_layers", r.parallel.first_stage_layers))
        return false;
      for (auto [column, flag] : {std::pair{"account_for_embedding", &r.parallel.embedding_stage},
                                  std::pair{"account_for_loss", &r.parallel.loss_stage}}) {
        if (!has(column) || field(column).empty()) continue;
        std::optional<bool> on;
        if (!yes_no(column, on)) return false;
        *flag = on.value_or(false);
      }
      if (has("last_stage_layers") && !field("last_stage_layers").empty() &&
          !integer("last_stage_layers", r.parallel.last_stage_layers))
        return false;
      if (has("recompute_layers") && !field("recompute_layers").empty()) {
        if (!integer("recompute_layers", n)) return false;
        if (r.parallel.recompute == Recompute::kNone && n > 0)
          return fail("recompute_layers", fmt::format("{} recomputed layers, but recompute is none", n));
        r.parallel.recompute_layers = n;
      }
      if (has("memory_gb") && !field("memory_gb").empty() &&
          !parse_double(field("memory_gb"), r.measured_memory_gb))
        return fail("memory_gb", fmt::format("expected a number from 1e-6 to 1e9, got \"{}\"", field("memory_gb")));
      r.metric = field("metric");
      double value = 0;
      if (!parse_double(field("value"), value))
        return fail("value", fmt::format("expected a number from 1e-6 to 1e9, got \"{}\"", field("value")));
      if (r.metric == "layer_fwd_bwd_ms") {
        r.measured = value;
      } else if (r.metric == "step_seconds" || r.metric == "tflops_per_gpu" || r.metric == "tokens_per_s_per_gpu") {
        std::string ss = field("step_seconds");
        if (ss.empty() && r.metric == "step_seconds") ss = field("value");
        if (ss.empty() && r.metric == "tokens_per_s_per_gpu") {
          // Every GPU's tokens: a step's global batch × sequence over n_gpu × tokens/s.
          if (r.n_gpu < 1) return fail("n_gpu", "must be at least 1 for tokens_per_s_per_gpu");
          r.measured = double(r.settings.global_batch) * m.seq / (double(r.n_gpu) * value);
          if (!(r.measured >= kMinMeasured && r.measured <= kMaxMeasured))
            return fail("value", fmt::format("gives a step of {:g} s, outside 1e-6 to 1e9", r.measured));
        } else if (!parse_double(ss, r.measured)) {
          return fail("step_seconds", fmt::format("expected a number from 1e-6 to 1e9, got \"{}\"", ss));
        }
      } else {
        return fail("metric", fmt::format("expected step_seconds, tflops_per_gpu, tokens_per_s_per_gpu or "
                                          "layer_fwd_bwd_ms, got \"{}\"",
                                          r.metric));
      }
      return true;
    };
    if (parse_row())
      parsed.rows.push_back(std::move(r));
    else
      parsed.skipped.push_back({r.index, line_no, reason});
  }
  return parsed;
}

std::optional<ParsedRows> read_validation_csv(const std::string& path, const ValidationOptions& o, std::string& error) {
  std::optional<std::string> text = read_input_file(path, error);  // at most 64 MiB
  if (!text) return std::nullopt;
  std::string inner;
  auto rows = parse_validation_csv(*text, o, inner);
  if (!rows) error = fmt::format("{}: {}", path, inner);
  return rows;
}

int choose_micro_batch(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c, ParallelConfig p) {
  const int per_replica = t.global_batch / std::max(1, p.dp);
  int best = 1;
  double best_time = 0;
  for (int b = 1; b <= per_replica; b *= 2) {
    if (per_replica % b != 0) continue;
    p.micro_batch = b;
    if (!check_constraints(m, t, c, p, false).empty()) continue;
    if (!estimate_memory(m, t, c, p).fits) continue;
    double time = estimate_step(m, t, c, p).total;
    if (best_time == 0 || time < best_time) best = b, best_time = time;
  }
  return best;
}

namespace {

void add_error(double abs_err, int& rows, double& sum, double& max) {
  ++rows, sum += abs_err, max = std::max(max, abs_err);
}

}  // namespace

ValidationSummary validate_rows(const ParsedRows& parsed, const ValidationOptions& o) {
  ValidationSummary s;
  s.skipped = parsed.skipped;
  double step_sum = 0, layer_sum = 0, memory_sum = 0;
  for (const auto& row : parsed.rows) {
    auto skip = [&](const std::string& why) {
      s.skipped.push_back({row.index, row.line, fmt::format("row {} (line {}): {}", row.index, row.line, why)});
    };
    const GpuSpec* gpu = find_gpu(row.gpu);
    if (!gpu) {
      skip(unplanned_gpu_message(row.gpu));
      continue;
    }
    if (const GpuMatch match = lookup_gpu(row.gpu); !match.approximation.empty())
      s.notes.push_back(fmt::format("row {} (line {}): {}", row.index, row.line, match.approximation));
    ClusterSpec c{*gpu, row.n_gpu, {}};
    ParallelConfig p = row.parallel;
    auto problems = check_constraints(row.model, row.settings, c, p);
    if (!problems.empty()) {
      skip(problems.front());
      continue;
    }
    ValidationResult r;
    r.row = row;
    if (!row.micro_batch_known)
      p.micro_batch = o.unknown_micro_batch == ValidationOptions::UnknownMicroBatch::kOne
                          ? 1
                          : choose_micro_batch(row.model, row.settings, c, p);
    r.chosen_micro_batch = p.micro_batch;
    if (row.metric == "layer_fwd_bwd_ms") {
      r.target = "layer_fwd_bwd_ms";
      r.predicted = estimate_layer(row.model, row.settings, c, p).total() * 1e3;
    } else {
      r.target = "step_seconds";
      r.predicted = r.predicted_step_seconds = estimate_step(row.model, row.settings, c, p).total;
    }
    r.error_pct = (r.predicted - row.measured) / row.measured * 100;
    const double abs_err = std::fabs(r.error_pct);
    if (r.target == "step_seconds")
      add_error(abs_err, s.step_rows, step_sum, s.step_max_abs_pct);
    else
      add_error(abs_err, s.layer_rows, layer_sum, s.layer_max_abs_pct);
    if (row.measured_memory_gb > 0) {
      r.predicted_memory_gb = estimate_memory(row.model, row.settings, c, p).reserved / 1e9;
      r.memory_error_pct = (r.predicted_memory_gb - row.measured_memory_gb) / row.measured_memory_gb * 100;
      add_error(std::fabs(r.memory_error_pct), s.memory_rows, memory_sum, s.memory_max_abs_pct);
    }
    s.results.push_back(std::move(r));
  }
  std::stable_sort(s.skipped.begin(), s.skipped.end(),
                   [](const SkippedRow& a, const SkippedRow& b) { return a.index < b.index; });
  if (s.step_rows) s.step_mean_abs_pct = step_sum / s.step_rows;
  if (s.layer_rows) s.layer_mean_abs_pct = layer_sum / s.layer_rows;
  if (s.memory_rows) s.memory_mean_abs_pct = memory_sum / s.memory_rows;
  return s;
}

}  // namespace stepscope::plan
