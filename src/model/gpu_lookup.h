// A GPU named by a user (a catalog key such as "h100-sxm", a device name as
// the driver prints it, a table model name) resolved to its row of the GPU
// table, once for every command: plan, monitor and plan validate refuse the
// same names with the same words, list the closest names, and say when a
// name is a variant the table approximates by another row.
#pragma once

#include <string>
#include <string_view>

#include "model/gpu_table.h"
#include "model/training_settings.h"

namespace stepscope::model {

struct GpuMatch {
  const GpuPeaks* row = nullptr;  // nullptr: unknown
  // Set when the name states a memory size the row does not have (e.g.
  // "H100-SXM5-96GB" on the 80 GB H100 SXM row): what is approximated.
  std::string approximation;
};

// The planner catalog's keys first (cluster_spec.h), then the device-name
// rules of the table.
GpuMatch lookup_gpu(std::string_view name);

// "unknown GPU \"NAME\" (closest: a, b, c)": the three known names nearest
// by edit distance (catalog keys and table rows, lower case).
std::string unknown_gpu_message(std::string_view name);

// Why the planner refuses a GPU name its catalog (cluster_spec.h) lacks: a
// table row without sourced achievable rates ("NVIDIA L40S is in the GPU
// table, but the planner has no sourced achievable rates (GEMM, NVLink,
// network) for it; it plans a100-40-sxm, ..."), else unknown_gpu_message.
std::string unplanned_gpu_message(std::string_view name);

// The dense tensor-core peak of a training precision on a row, TFLOP/s;
// fp8 without an FP8 unit runs at the 16-bit rate (as GpuSpec::peak_tflops).
double training_peak_tflops(const GpuPeaks& row, Dtype dtype);

}  // namespace stepscope::model
