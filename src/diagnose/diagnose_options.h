// Knobs of the diagnosis, each with the reason for its default.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis_options.h"

namespace stepscope::model {
struct GpuPeaks;
}  // namespace stepscope::model

namespace stepscope::diagnose {

struct DiagnoseOptions {
  // Detectors to skip, by name (detector_registry.cpp lists them).
  std::vector<std::string> disabled_detectors;

  // A finding is reported only if its estimated saving is at least this share
  // of the step, %. Below it a cause is within the run-to-run spread of step
  // time under the profiler (several % between runs of the same program), so
  // it is kept in Diagnosis::minor rather than offered as work worth doing.
  double min_saving_pct = 5.0;

  // The run's mean step measured without the profiler, ms (--unprofiled-step-ms);
  // overrides the trace's stepscope_unprofiled_step_ms. The profiler-cost
  // model is calibrated to it (docs/whatif.md, "Profiler overhead").
  std::optional<double> unprofiled_step_ms;

  // Build and replay each step's dependency graph (docs/whatif.md): the run
  // without the profiler, replay savings, critical paths. Off (analyze
  // --no-replay), findings keep the detectors' bounds as their savings; for
  // measuring what the replay costs, or a quicker pass over a huge set.
  bool replay = true;

  // Replay every rank's remedies as its parts are collected (the savings a
  // per-rank summary carries), instead of only the remedies of the findings
  // made. The savings are the same; this replays remedies whose finding is
  // not reported too (about 2% more time on an 8-rank set), so analyze
  // leaves it off and summarize turns it on.
  bool replay_as_collected = false;

  // Finding categories (their JSON names) whose remedies are replayed
  // together on request (analyze --what-if): "what would the step take if I
  // fixed these". Empty: not asked. Names are checked by the caller.
  std::vector<std::string> what_if;

  // A run is healthy when every rank spends at least this share of its step
  // in effective compute (tensor-core matmuls and other kernels, not SIMT
  // matmuls), %: then only findings that make the computation faster are
  // reported, and primary_bottleneck is "none" unless one of them is.
  double none_effective_compute_pct = 90.0;

  // Launch-bound evidence: kernels shorter than this count as tiny, µs. A
  // kernel launch costs the host about 5-10 µs (more under the profiler), so
  // a stream of kernels this short cannot keep the GPU busy.
  double tiny_kernel_us = 10.0;

  // compute_efficiency: a matmul group counts as slow when it reaches less
  // than this fraction of the dense datasheet peak for its dtype; its saving
  // is the time above running at this fraction. Large well-shaped GEMMs reach
  // 70-80% of the datasheet peak in cuBLAS, so half is a bar that only badly
  // shaped or badly configured matmuls miss.
  double matmul_efficient_fraction = 0.5;

  // compute_efficiency: a rank whose FP32 matmul kernels (SIMT, or tensor
  // cores under float32 ops) take at least this share of its matmul kernel
  // time runs an FP32 model, and the rest of its FP32 work is priced too
  // (bf16 halves the bytes). A bf16 model with a few FP32 matmuls (a loss
  // head, a router) stays far below half.
  double fp32_model_matmul_share = 0.5;

  // compute_efficiency: kernels below this "est. achieved occupancy %" are
  // listed as low-occupancy evidence, %.
  double low_occupancy_pct = 25.0;

  // communication: a collective smaller than this is latency-bound (NCCL
  // reaches its bus bandwidth only from a few MB), B.
  double small_collective_bytes = 1 << 20;

  // Peak rates for every rank instead of the datasheet row of its device
  // name: measured ceilings from a hardware profile (`analyze --profile`),
  // so efficiencies are against what the card reaches. nullptr: datasheet.
  const model::GpuPeaks* peaks_override = nullptr;

  // The timeline the attribution reads; the exact one unless the caller runs
  // a compatibility mode.
  analysis::AnalysisOptions analysis;
};

}  // namespace stepscope::diagnose
