// What a detector reports: one cause of lost step time, with the numbers that
// show it, a few concrete events to look at, an upper bound on what fixing it
// can save, and the change to make. Every detector returns this one shape, so
// ranking, validation and the renderers treat them alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "whatif/remedy.h"

namespace stepscope::diagnose {

// The cause vocabulary (written as to_string gives it in JSON and docs/findings.md).
enum class Category : uint8_t {
  kDataPipeline,         // "data_pipeline": the GPU waits for the input pipeline
  kHostOverhead,         // "host_overhead": the GPU waits for the host to launch work
  kHostSync,             // "host_sync": the host blocks on the GPU, draining its queue
  kComputeEfficiency,    // "compute_efficiency": kernels slower than the hardware allows
  kMemoryAllocator,      // "memory_allocator": cudaMalloc/cudaFree inside steps
  kMemoryCapacity,       // "memory_capacity": near or over device memory
  kCommunication,        // "communication": collectives not hidden behind compute
  kLoadImbalance,        // "load_imbalance": ranks wait for the slowest
  kFusionOpportunity,    // "fusion_opportunity": separate kernels that could be one
  kUnfusedOptimizer,     // "unfused_optimizer": a per-parameter for-loop optimizer
  kRecomputedConstants,  // "recomputed_constants": the same tables rebuilt again and again
};
constexpr int kCategoryCount = 11;

std::string_view to_string(Category c);
// Inverse of to_string; nullopt for an unknown name.
std::optional<Category> category_from_string(std::string_view name);

enum class Severity : uint8_t { kLow, kMedium, kHigh };
std::string_view to_string(Severity s);  // "low", "medium", "high"

// How sure the detector is that the cause is real and the remedy applies.
enum class Confidence : uint8_t { kLow, kMedium, kHigh };
std::string_view to_string(Confidence c);  // "low", "medium", "high"

// Severity from the share of step time a finding explains: >= 25% high,
// >= 10% medium, otherwise low (docs/findings.md).
Severity severity_for_saving(double saving_pct);

// One number behind a finding.
struct Metric {
  std::string name;   // snake_case, e.g. "gpu_idle_in_dataloader_us_per_step"
  double value = 0;
  std::string unit;   // "us", "%", "count", "TFLOP/s", "GB/s", "B", ...
};

// One concrete place in the trace to look at.
struct Example {
  int64_t rank = 0;
  int64_t step = -1;     // N of ProfilerStep#N; -1 when outside steps or the trace has none
  int64_t ts_ns = 0;     // start on the trace clock, ns (absolute = base_time_ns + ts_ns)
  int64_t dur_ns = 0;    // duration, ns
  std::string name;      // the op, kernel or runtime call
  std::string detail;    // what about it matters, with numbers
  // Start minus its step's start (ProfilerStep#N on the host), ns; -1 outside steps.
  int64_t step_offset_ns = -1;
  // The user's Python line it ran under ("train.py:42 in forward"), when the
  // trace has stacks (example_place.h); "" otherwise.
  std::string source;
  // False for an example from another file with no time on this trace's
  // clock (a memory snapshot not aligned with a trace): ts_ns and step unset.
  bool timed = true;
};

inline constexpr size_t kMaxExamples = 5;

struct Evidence {
  std::vector<Metric> metrics;
  std::vector<Example> examples;  // at most kMaxExamples, most telling first
};

// Host-caused GPU idle (host_overhead bucket time) that a finding explains,
// as an interval on one rank's trace clock. Detectors that run later (
// host_overhead last) leave claimed intervals out, so one idle nanosecond is
// not offered as a saving twice.
struct IdleClaim {
  int64_t rank = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// A finding's fix on one rank, as a change of that rank's step graph.
struct RankRemedy {
  int64_t rank = 0;
  whatif::Remedy remedy;
};


// What a finding's estimated saving was computed from.
enum class SavingBasis : uint8_t {
  kBound,   // the detector's bound on the profiled trace (no remedy model, or no faithful replay)
  kReplay,  // the replay of the run without the profiler, with and without the fix
};
std::string_view to_string(SavingBasis b);

struct Finding {
  Category category = Category::kHostOverhead;
  std::string detector;   // name of the detector that produced it
  std::string title;      // one line, with the key number
  Severity severity = Severity::kLow;
  Confidence confidence = Confidence::kMedium;
  Evidence evidence;
  // The step time the fix recovers per step, µs, and as % of that rank's
  // mean step, on the rank where it is largest (saving_rank). By replay
  // where the finding has a remedy model and the rank replays faithfully:
  // the mean step of the run without the profiler minus the same with the
  // fix applied (docs/whatif.md, "Savings"); else the detector's bound.
  double estimated_saving_us = 0;
  double estimated_saving_pct = 0;
  int64_t saving_rank = -1;
  SavingBasis saving_basis = SavingBasis::kBound;
  // The detector's own upper bound on the saving, on the profiled trace
  // (mean per step, µs, % of the profiled step, its rank): kept as a
  // cross-check of the replay.
  double bound_saving_us = 0;
  double bound_saving_pct = 0;
  int64_t bound_rank = -1;
  // The fix as graph changes, per rank (empty: no remedy model).
  std::vector<RankRemedy> remedies;
  // False for findings that cost no step time by themselves (memory capacity
  // risk); they are reported by severity, not by saving, and never primary.
  bool saves_time = true;
  std::string remedy;     // the concrete change, in PyTorch terms
  std::vector<IdleClaim> claims;  // host idle explained (see IdleClaim); not rendered
  // The remedy replayed rank by rank when the ranks were read (the largest
  // saving, the earlier rank of equals); rank -1: not replayed that way, so
  // the replay, where it can, uses `remedies`. Not rendered.
  struct ReplayPick {
    int64_t rank = -1;
    int64_t saving_ns = 0;
    int64_t step_ns = 0;  // that rank's unprofiled mean step
  } replay_pick;
};

}  // namespace stepscope::diagnose
