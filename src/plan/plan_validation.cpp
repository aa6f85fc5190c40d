#include "plan/plan_validation.h"

#include <fmt/core.h>

#include <cmath>
#include <map>
#include <sstream>

#include "plan/json_file.h"
#include "plan/memory_model.h"
#include "plan/plan_constraints.h"
#include "plan/step_time_model.h"

namespace stepscope::plan {
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

std::optional<std::vector<ValidationRow>> parse_validation_csv(const std::string& text, const ValidationOptions& o,
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
  std::vector<ValidationRow> rows;
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r") continue;
    auto f = split_csv(line);
    ValidationRow r;
    r.index = static_cast<int>(rows.size());
    auto where = [&](const char* c) { return fmt::format("row {} (line {}), column \"{}\"", r.index, line_no, c); };
    auto field = [&](const char* c) -> std::string {
      size_t i = col[c];
      return i < f.size() ? f[i] : std::string();
    };
    auto integer = [&](const char* c, int& out) {
      if (parse_int(field(c), out)) return true;
      error = fmt::format("{}: expected a non-negative integer, got \"{}\"", where(c), field(c));
      return false;
    };
    if (f.size() < header.size()) {
      error = fmt::format("row {} (line {}): {} columns, header has {}", r.index, line_no, f.size(), header.size());
      return std::nullopt;
    }
    r.source = field("source");
    ModelSpec& m = r.model;
    m.name = field("model");
    for (const char* label : {"source", "model", "gpu"})
      if (!is_printable_label(field(label)) && !(field(label).empty() && label == std::string_view("source"))) {
        error = fmt::format("{}: expected 1 to 256 characters without control characters", where(label));
        return std::nullopt;
      }
    if (!integer("layers", m.layers) || !integer("hidden", m.hidden) || !integer("heads", m.heads) ||
        !integer("kv_heads", m.kv_heads) || !integer("ffn_hidden", m.ffn_hidden) || !integer("vocab", m.vocab) ||
        !integer("seq", m.seq) || !integer("n_gpu", r.n_gpu) || !integer("tp", r.parallel.tp) ||
        !integer("pp", r.parallel.pp) || !integer("dp", r.parallel.dp) || !integer("cp", r.parallel.cp) ||
        !integer("vpp", r.parallel.vpp) || !integer("global_batch", r.settings.global_batch))
      return std::nullopt;
    // GPT-style rows (ffn = 4h) have a GeLU MLP, biases, dropout, learned
    // positions and tied embeddings; any other width is a SwiGLU/RoPE model
    // (Llama family). A "gated_mlp" column, when present, decides instead.
    m.gated_mlp = m.ffn_hidden != 4 * m.hidden;
    if (col.count("gated_mlp")) {
      std::string g = field("gated_mlp");
      if (g != "yes" && g != "no") {
        error = fmt::format("{}: expected yes or no, got \"{}\"", where("gated_mlp"), g);
        return std::nullopt;
      }
      m.gated_mlp = g == "yes";
    }
    m.dropout = m.biases = m.learned_positions = m.tied_embeddings = !m.gated_mlp;
    if (std::string bad = validate_model(m); !bad.empty()) {
      error = fmt::format("row {} (line {}): {}", r.index, line_no, bad);
      return std::nullopt;
    }
    r.gpu = field("gpu");
    std::string mb = field("micro_batch");
    if (mb == "unknown") {
      r.micro_batch_known = false;
      r.parallel.micro_batch = 1;
    } else if (!integer("micro_batch", r.parallel.micro_batch)) {
      return std::nullopt;
    }
    if (!parse_recompute(field("recompute"), r.parallel.recompute)) {
      error = fmt::format("{}: expected none, selective or full, got \"{}\"", where("recompute"), field("recompute"));
      return std::nullopt;
    }
    std::string sp = field("sequence_parallel");
    if (sp != "yes" && sp != "no") {
      error = fmt::format("{}: expected yes or no, got \"{}\"", where("sequence_parallel"), sp);
      return std::nullopt;
    }
    r.parallel.sequence_parallel = sp == "yes";
    const bool megatron_gpt_era = !m.gated_mlp && m.kv_heads == m.heads && is_ampere(r.gpu);
    r.settings.attention = o.attention.value_or(megatron_gpt_era ? AttentionKernel::kUnfused : AttentionKernel::kFlash);
    r.settings.overlap_dp_comm = o.overlap_dp_comm.value_or(!megatron_gpt_era);
    r.settings.dtype = o.dtype.value_or(megatron_gpt_era ? Dtype::kFp16 : Dtype::kBf16);
    if (col.count("attention") && !field("attention").empty() &&
        !parse_attention(field("attention"), r.settings.attention)) {
      error = fmt::format("{}: expected flash or unfused, got \"{}\"", where("attention"), field("attention"));
      return std::nullopt;
    }
    if (col.count("dtype") && !field("dtype").empty() && !parse_dtype(field("dtype"), r.settings.dtype)) {
      error = fmt::format("{}: expected bf16, fp16 or fp8, got \"{}\"", where("dtype"), field("dtype"));
      return std::nullopt;
    }
    r.metric = field("metric");
    double value = 0;
    if (!parse_double(field("value"), value)) {
      error = fmt::format("{}: expected a number from 1e-6 to 1e9, got \"{}\"", where("value"), field("value"));
      return std::nullopt;
    }
    if (r.metric == "layer_fwd_bwd_ms") {
      r.measured = value;
    } else if (r.metric == "step_seconds" || r.metric == "tflops_per_gpu") {
      std::string ss = field("step_seconds");
      if (ss.empty() && r.metric == "step_seconds") ss = field("value");
      if (!parse_double(ss, r.measured)) {
        error = fmt::format("{}: expected a number from 1e-6 to 1e9, got \"{}\"", where("step_seconds"), ss);
        return std::nullopt;
      }
    } else {
      error = fmt::format("{}: expected step_seconds, tflops_per_gpu or layer_fwd_bwd_ms, got \"{}\"", where("metric"),
                          r.metric);
      return std::nullopt;
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

std::optional<std::vector<ValidationRow>> read_validation_csv(const std::string& path, const ValidationOptions& o,
                                                              std::string& error) {
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

std::optional<ValidationSummary> validate_rows(const std::vector<ValidationRow>& rows, const ValidationOptions& o,
                                               std::string& error) {
  ValidationSummary s;
  double step_sum = 0, layer_sum = 0;
  for (const auto& row : rows) {
    const GpuSpec* gpu = find_gpu(row.gpu);
    if (!gpu) {
      error = fmt::format("row {}: unknown GPU \"{}\"", row.index, row.gpu);
      return std::nullopt;
    }
    ClusterSpec c{*gpu, row.n_gpu, {}};
    ParallelConfig p = row.parallel;
    auto problems = check_constraints(row.model, row.settings, c, p);
    if (!problems.empty()) {
      error = fmt::format("row {}: {}", row.index, problems.front());
      return std::nullopt;
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
    double abs_err = std::fabs(r.error_pct);
    if (r.target == "step_seconds") {
      ++s.step_rows, step_sum += abs_err, s.step_max_abs_pct = std::max(s.step_max_abs_pct, abs_err);
    } else {
      ++s.layer_rows, layer_sum += abs_err, s.layer_max_abs_pct = std::max(s.layer_max_abs_pct, abs_err);
    }
    s.results.push_back(std::move(r));
  }
  if (s.step_rows) s.step_mean_abs_pct = step_sum / s.step_rows;
  if (s.layer_rows) s.layer_mean_abs_pct = layer_sum / s.layer_rows;
  return s;
}

}  // namespace stepscope::plan
