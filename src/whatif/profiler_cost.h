// What the profiler costs the host, and the run without it. The profiler
// records every CPU op, runtime call, allocator event and (with_stack) Python
// call, and each record costs host time that the run without the profiler
// does not spend. The settings are read from the trace (what it holds), the
// costs per record were measured on an H200 host by paired runs
// (workloads/profiler_overhead.py; method and data: docs/whatif.md, "Profiler
// overhead"), and the replay with those costs taken off the host timeline is
// the estimate of the unprofiled run. Savings are measured against it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/event_store.h"
#include "whatif/replay.h"
#include "whatif/step_graph.h"

namespace stepscope::whatif {

// The profiler options a trace was recorded with, and its records.
struct ProfilerSettings {
  bool shapes = false;  // record_shapes: CPU ops carry "Input Dims"
  bool memory = false;  // profile_memory: "[memory]" instants
  bool stack = false;   // with_stack: python_function spans
  bool flops = false;   // with_flops: CPU ops carry "flops"
  int64_t cpu_ops = 0;
  int64_t runtime_calls = 0;
  int64_t memory_events = 0;
  int64_t python_events = 0;
};
ProfilerSettings infer_profiler_settings(const trace::EventStore& store);

// Host cost per record, ns. Measured on the H200 host (docs/whatif.md): a
// least-squares fit, through the origin, of the host's extra enqueue time
// per step over the records per step, in 7 training workloads x 6 settings.
struct ProfilerCostModel {
  int64_t per_op_ns = 1160;       // each CPU op or runtime call
  int64_t shapes_extra_ns = 490;  // ... more with record_shapes
  int64_t flops_extra_ns = 800;   // ... more with with_flops
  int64_t memory_event_ns = 680;  // each allocator event (profile_memory)
  int64_t python_event_ns = 3430; // each Python call (with_stack) in model code
  // A trace with more Python calls than this per recorded op is mostly a
  // pure-Python loop (measured: 0.7-7.6 per op in model code, compiled code
  // included; 83 in a DataLoader that tokenizes in Python), and each call
  // costs what the tracer's bookkeeping does: 0.06 us, measured there.
  int64_t python_loop_calls_per_op = 20;
  int64_t python_loop_event_ns = 60;
  int64_t per_step_ns = 400'000;  // prof.step() and the step's own bookkeeping
};

struct UnprofiledBaseline {
  ProfilerSettings settings;
  ReplayInput input;              // the recorded input with the profiler's host cost taken off
  int64_t steps = 0;              // step windows replayed
  int64_t profiled_step_ns = 0;   // mean recorded window, ns
  int64_t unprofiled_step_ns = 0; // mean replayed window of `input`, ns
  int64_t model_cost_ns = 0;      // the model's host cost inside the steps, per step, before scaling, ns
  double scale = 1.0;             // factor on the model's costs (1 unless calibrated)
  bool calibrated = false;        // scale set so the estimate matches a measured unprofiled step
  std::optional<double> measured_step_ms;  // the measured unprofiled step it was calibrated to
  std::vector<std::string> notes;
};

// Requires g.usable(). With `measured_step_ms` (the trace's
// stepscope_unprofiled_step_ms, or the command line's), the costs are scaled
// so the replay's mean step equals it, within what removing host cost can do.
UnprofiledBaseline unprofiled_baseline(const StepGraph& g, const trace::EventStore& store,
                                       std::optional<double> measured_step_ms = std::nullopt,
                                       const ProfilerCostModel& model = {});

// Mean replayed window of `in` over the graph's recorded step count, ns (0
// when the graph has no step window).
int64_t mean_step_ns(const StepGraph& g, const ReplayInput& in);

}  // namespace stepscope::whatif
