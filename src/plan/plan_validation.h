// Validation against published runs: reads rows in the format of
// shared/planner/validation_public.csv, predicts each, and summarises errors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/cluster_spec.h"
#include "model/model_spec.h"
#include "model/parallel_config.h"
#include "model/training_settings.h"

namespace stepscope::plan {

using model::AttentionKernel;
using model::ClusterSpec;
using model::Dtype;
using model::ModelSpec;
using model::ParallelConfig;
using model::TrainingSettings;

struct ValidationRow {
  int index = 0;  // 0-based data row
  int line = 0;   // 1-based line of the file
  std::string source;
  std::string metric;  // step_seconds | tflops_per_gpu | tokens_per_s_per_gpu | layer_fwd_bwd_ms
  ModelSpec model;
  std::string gpu;
  int n_gpu = 0;
  ParallelConfig parallel;
  bool micro_batch_known = true;
  TrainingSettings settings;
  double measured = 0;  // step seconds, or ms for layer_fwd_bwd_ms rows
  double measured_memory_gb = 0;  // the optional memory_gb column (peak reserved per GPU, 1e9 B); 0 when absent
  std::string framework;          // the optional framework column, lower case ("" when absent)
};

// A row that was not predicted, and why: "row 3 (line 5), column \"dtype\":
// mxfp8 is not modelled yet (bf16, fp16 or fp8)". The other rows still run.
struct SkippedRow {
  int index = 0;
  int line = 0;
  std::string reason;  // one line naming the row, the line and, where one is at fault, the column
};

struct ParsedRows {
  std::vector<ValidationRow> rows;
  std::vector<SkippedRow> skipped;
};

struct ValidationResult {
  ValidationRow row;
  std::string target;                 // "step_seconds" or "layer_fwd_bwd_ms"
  double predicted = 0;               // same unit as row.measured
  double error_pct = 0;               // (predicted - measured) / measured × 100
  int chosen_micro_batch = 0;         // micro-batch used (chosen when the row says unknown)
  double predicted_step_seconds = 0;  // 0 for layer rows
  // Rows with memory_gb: the predicted peak reserved per GPU (memory_model's reserved, GB)
  // and its error against the published figure.
  double predicted_memory_gb = 0;
  double memory_error_pct = 0;
};

struct ValidationSummary {
  std::vector<ValidationResult> results;
  std::vector<SkippedRow> skipped;  // rows of the file not predicted, in file order
  std::vector<std::string> notes;   // rows predicted on an approximated GPU (gpu_lookup.h), one line each
  double step_mean_abs_pct = 0, step_max_abs_pct = 0;
  double layer_mean_abs_pct = 0, layer_max_abs_pct = 0;
  double memory_mean_abs_pct = 0, memory_max_abs_pct = 0;
  int step_rows = 0, layer_rows = 0, memory_rows = 0;
};

struct ValidationOptions {
  // Software settings the CSV does not state. Unset: a general rule from the
  // row (docs/planner.md "Validation"): GPT-style rows (4h GeLU MLP,
  // multi-head attention) on Ampere GPUs are taken as Megatron-LM of
  // 2021-2022 — unfused softmax attention, fp16, gradients reduced after
  // backward; every other row as a current stack — flash attention, bf16,
  // reduction overlapped with backward. Set: applies to every row. A row's
  // own "attention" / "dtype" column wins over both.
  std::optional<AttentionKernel> attention;
  std::optional<bool> overlap_dp_comm;
  std::optional<Dtype> dtype;
  // Rows whose micro_batch is `unknown`: 1 (the size Megatron-LM's GPT-3
  // reference scripts and the Korthikanti et al. runs use; it minimises the
  // pipeline bubble), or the fastest that fits (choose_micro_batch).
  enum class UnknownMicroBatch : uint8_t { kOne, kFastestFitting };
  UnknownMicroBatch unknown_micro_batch = UnknownMicroBatch::kOne;
};

// Parses the CSV text. A bad row is skipped with its reason (SkippedRow) and
// the others are kept; nullopt, with `error` set, only for the file itself
// (empty, a header without a required column).
std::optional<ParsedRows> parse_validation_csv(const std::string& text, const ValidationOptions& o, std::string& error);
std::optional<ParsedRows> read_validation_csv(const std::string& path, const ValidationOptions& o, std::string& error);
// Micro-batch for rows that do not state it: the value, among powers of two
// dividing the per-replica batch, whose predicted step is fastest while the
// memory fits (published runs are tuned).
int choose_micro_batch(const ModelSpec& m, const TrainingSettings& t, const ClusterSpec& c, ParallelConfig p);
// Predicts every parsed row; a row the planner cannot take (an unknown GPU,
// an impossible layout) joins the parser's skipped rows.
ValidationSummary validate_rows(const ParsedRows& parsed, const ValidationOptions& o);

}  // namespace stepscope::plan
