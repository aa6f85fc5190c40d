#include "monitor/mfu.h"

#include <fmt/core.h>

#include <cmath>

#include "model/gpu_lookup.h"
#include "model/model_lookup.h"
#include "model/step_time_model.h"
#include "model/training_settings.h"

namespace stepscope::monitor {

std::optional<double> MfuModel::mfu(std::optional<double> tokens_per_second) const {
  if (!tokens_per_second || peak_flops_per_gpu <= 0 || gpus < 1) return std::nullopt;
  // Every input is finite and positive, but a product of large ones need not
  // be: no series rather than +Inf.
  const double ratio = *tokens_per_second * flops_per_token / (peak_flops_per_gpu * gpus);
  if (!std::isfinite(ratio) || ratio < 0) return std::nullopt;
  return ratio;
}

double model_flops_per_token(const model::ModelSpec& m) {
  if (m.seq <= 0) return 0;
  const double per_seq = 3 * model::layer_forward_flops(m, 1) * m.layers + 6.0 * m.seq * m.hidden * m.vocab;
  return per_seq / m.seq;
}

std::optional<MfuModel> make_mfu_model(const std::string& model, const std::string& gpu, const std::string& dtype,
                                       int gpus, std::string& error) {
  auto found = model::lookup_model(model, error);
  if (!found) {
    error = "--model: " + error;
    return std::nullopt;
  }
  const model::ModelSpec spec = *found;
  if (std::string bad = model::validate_model(spec); !bad.empty()) {
    error = fmt::format("--model: {}", bad);
    return std::nullopt;
  }
  // Any GPU of the table: the MFU needs only its peak rates.
  const model::GpuMatch gpu_row = model::lookup_gpu(gpu);
  if (!gpu_row.row) {
    error = "--gpu: " + model::unknown_gpu_message(gpu);
    return std::nullopt;
  }
  model::Dtype dt;
  if (!model::parse_dtype(dtype, dt)) {
    error = "--dtype: expected bf16, fp16, fp8, mxfp8 or nvfp4";
    return std::nullopt;
  }
  if (gpus < 1) {
    error = "--gpus: must be at least 1";
    return std::nullopt;
  }
  if (model::training_peak_tflops(*gpu_row.row, dt) <= 0) {
    error = fmt::format("--dtype: {} has no {} tensor cores", gpu_row.row->model, model::to_string(dt));
    return std::nullopt;
  }
  MfuModel m;
  m.model_name = spec.name;
  m.flops_per_token = model_flops_per_token(spec);
  m.peak_flops_per_gpu = model::training_peak_tflops(*gpu_row.row, dt) * 1e12;
  m.gpus = gpus;
  return m;
}

}  // namespace stepscope::monitor
