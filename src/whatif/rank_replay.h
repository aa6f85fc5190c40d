// One rank's replay, summarised for the reports: how faithfully the graph
// replays the recorded run (each step's wall time, replayed against
// measured), how much of the run its edges explain, and what it could not
// model. Definitions: docs/whatif.md.
#pragma once

#include <array>
#include <optional>
#include <cstdint>
#include <string>
#include <vector>

#include "whatif/profiler_cost.h"
#include "whatif/replay.h"
#include "whatif/step_graph.h"

namespace stepscope::whatif {

struct StepFidelity {
  int64_t step = -1;
  int64_t measured_ns = 0;  // the step's window in the recorded run, ns
  int64_t replayed_ns = 0;  // the same window replayed with the recorded durations, ns
  double error_pct() const {
    return measured_ns > 0 ? 100.0 * static_cast<double>(replayed_ns - measured_ns) / static_cast<double>(measured_ns)
                           : 0.0;
  }
};

struct RankReplay {
  int64_t rank = 0;
  bool replayed = false;  // false: the graph has a cycle or nothing to replay (see notes)
  int64_t host_marks = 0;
  int64_t gpu_nodes = 0;
  std::array<int64_t, kEdgeKindCount> edges{};  // edge count by EdgeKind
  int64_t blocking_calls = 0;                   // host calls that waited for GPU work
  int64_t launch_latency_ns = 0;                // StepGraph's typical weights, ns
  int64_t stream_gap_ns = 0;
  int64_t sync_release_ns = 0;
  // Residual delay (time no edge explains) summed over GPU nodes and host
  // marks inside the steps, ns: what a remedy cannot move.
  int64_t gpu_residual_ns = 0;
  int64_t host_residual_ns = 0;
  std::vector<StepFidelity> steps;
  double max_abs_error_pct = 0;  // over steps
  std::vector<std::string> notes;

  // The run without the profiler (profiler_cost.h), set by the diagnosis.
  struct Unprofiled {
    bool estimated = false;
    ProfilerSettings settings;
    int64_t profiled_step_ns = 0;    // mean recorded step window, ns
    int64_t unprofiled_step_ns = 0;  // estimate_unprofiled_step: mean replayed window without the profiler's cost, ns
    int64_t model_cost_ns = 0;       // the cost model's host time per step, before scaling, ns
    double scale = 1.0;
    bool calibrated = false;
    std::optional<double> measured_step_ms;
  } unprofiled;
  // All reported findings' remedies replayed together on this rank: the
  // unprofiled step minus the step with them, ns; -1 when not replayed.
  int64_t combined_saving_ns = -1;
};

// Replays `g` with the recorded durations and compares each step.
RankReplay summarize_replay(int64_t rank, const StepGraph& g);

// A replay whose worst step is further than this from its measured wall is
// reported as unfaithful, and savings fall back to the detectors' bounds (%).
constexpr double kFidelityLimitPct = 2.0;

}  // namespace stepscope::whatif
