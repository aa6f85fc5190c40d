// Live model FLOPs utilisation: tokens/s × model FLOPs per token over the
// peak of the job's GPUs. FLOPs per token follow `plan` (plan/step_time_model:
// 3 × layer forward FLOPs + the logits GEMMs, no recomputation).
#pragma once

#include <optional>
#include <string>

#include "model/model_spec.h"

namespace stepscope::monitor {

struct MfuModel {
  std::string model_name;
  double flops_per_token = 0;      // model FLOPs of forward + backward for one token
  double peak_flops_per_gpu = 0;   // dense tensor-core peak, FLOP/s
  int gpus = 1;
  // Fraction of the peak, or nullopt when tokens/s is unknown.
  std::optional<double> mfu(std::optional<double> tokens_per_second) const;
};

double model_flops_per_token(const model::ModelSpec& m);

// From --model (preset or JSON file), --gpu (catalog key or device name as
// NVML prints it), the dtype and the GPU count; error names the option.
std::optional<MfuModel> make_mfu_model(const std::string& model, const std::string& gpu, const std::string& dtype,
                                       int gpus, std::string& error);

}  // namespace stepscope::monitor
