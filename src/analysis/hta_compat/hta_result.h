// What `--compat hta` reports: HTA 0.6.1's output tables, field by field, in
// HTA's units (µs as HTA writes them, percentages 0..100, ratios 0..1).
// pandas NaN is std::nullopt. Where HTA raises instead of answering, the
// error text is kept (HtaErrors) and the rows hold stepscope's sensible
// answer instead (docs/hta_compat.md §9).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/hta_compat/hta_numeric.h"
#include "analysis/hta_compat/hta_release.h"
#include "analysis/hta_compat/kernel_type.h"

namespace stepscope::analysis::hta {

// get_temporal_breakdown(): one row per rank.
// Invariant: idle + compute + non_compute == kernel_time.
struct HtaTemporalRow {
  int64_t rank = 0;
  double idle_time_us = 0;         // kernel_time - Σ merged lengths of all kernels, µs
  double compute_time_us = 0;      // Σ merged lengths of COMPUTATION kernels, µs
  double non_compute_time_us = 0;  // kernel_time - compute - idle, µs
  double kernel_time_us = 0;       // last merged end - first merged start over all kernels, µs
  std::optional<double> idle_time_pctg;         // round(100 * idle / kernel_time, 2); nullopt if kernel_time == 0
  std::optional<double> compute_time_pctg;      // round(100 * compute / kernel_time, 2)
  std::optional<double> non_compute_time_pctg;  // round(100 * non_compute / kernel_time, 2)
  // Sensible-answer bookkeeping (not HTA fields):
  bool no_gpu_events = false;               // the rank has no kernel; HTA raises IndexError, the row is all 0
  int64_t clamped_negative_durations = 0;   // > 0: HTA's assertion failed; recomputed with these durations set to 0
};

// get_gpu_kernel_breakdown()'s kernel type table, over all ranks.
struct HtaKernelTypeRow {
  std::string kernel_type;  // "COMPUTATION", "COMPUTATION overlapping COMMUNICATION", ...
  int64_t sum_us = 0;       // time with exactly this set of types running, µs (HTA truncates each piece to whole µs)
  std::optional<double> percentage;  // round(sum / Σ sums * 100, 1); nullopt when Σ sums == 0
};

// get_gpu_kernel_breakdown()'s top-kernel table (num_kernels = 5, duration_ratio = 0.8).
struct HtaKernelTopRow {
  std::string name;     // kernel name, or "others" for the folded tail
  double sum_us = 0;    // Σ durations, µs
  double max_us = 0;    // µs
  double min_us = 0;    // µs
  double mean_us = 0;   // µs
  double stddev = 0;    // sample standard deviation (0 for a single value), µs
  HtaKernelType kernel_type = HtaKernelType::kComputation;
  int64_t rank = 0;
};

// get_idle_time_breakdown(ranks=all, streams=all): one row per (rank, stream, category).
struct HtaIdleRow {
  int64_t rank = 0;
  int64_t stream = 0;
  std::string idle_category;  // "host_wait", "kernel_wait" or "other"
  double idle_time = 0;       // Σ gaps before kernels of this category, rounded to 2 decimals, µs
  std::optional<double> idle_time_ratio;  // share of the stream's idle time, rounded to 2 decimals (0..1)
};

// get_comm_comp_overlap(): one row per rank.
struct HtaOverlapRow {
  int64_t rank = 0;
  std::optional<double> comp_comm_overlap_pctg;  // % of communication time overlapped by computation; nullopt without communication
};

// get_cuda_kernel_launch_stats() summary: describe() of each column per rank.
struct HtaLaunchStats {
  int64_t rank = 0;
  HtaDescribe cpu_duration;  // runtime launch call duration, µs
  HtaDescribe gpu_duration;  // launched kernel duration, µs
  HtaDescribe launch_delay;  // max(kernel start - launch end, 0), µs
};

// get_queue_length_summary(): describe() of the queue length per (rank, stream).
struct HtaQueueLengthRow {
  int64_t rank = 0;
  int64_t stream = 0;
  HtaDescribe queue_length;  // launched-but-unfinished operations on the stream (count)
};

// get_memory_bw_summary(): describe() of the bandwidth per (rank, memory kind).
struct HtaMemoryBwRow {
  int64_t rank = 0;
  std::string name;          // "Memcpy HtoD", "Memcpy DtoD", "Memset", "Memcpy Unknown", ...
  HtaDescribe memory_bw_gbps;  // concurrent memory bandwidth while > 0, GB/s
};

// The exception HTA raised for a table, as "Type: message"; empty when HTA answered.
struct HtaErrors {
  std::string temporal_breakdown;    // "IndexError: ..." (a rank without kernels), "AssertionError: " (negative durations)
  std::string idle_time_breakdown;   // "ValueError: No objects to concatenate" (no kernel on any rank)
  std::string queue_length_summary;  // "AttributeError: 'NoneType' ..." (no launch on any rank)
  std::string memory_bw_summary;     // "AttributeError: 'NoneType' ..." (no memory kernel on any rank)
};

// Everything HTA computes for one rank, as if its trace were alone in a folder
// (the step filter and alignment then see only this trace).
struct HtaRankResult {
  int64_t rank = 0;
  std::string source_path;
  std::vector<std::string> profiler_steps;
  bool no_gpu_events = false;       // no frame row on a stream: HTA fails temporal/idle/queue/memory tables
  bool no_memory_kernels = false;   // no MEMORY kernel: HTA fails the memory bandwidth table
  int64_t negative_durations = 0;   // kernels with duration -1 after HTA's rounding (they enter every sum)
  HtaTemporalRow temporal_breakdown;
  std::vector<HtaIdleRow> idle_time_breakdown;
  HtaOverlapRow comm_comp_overlap;
  HtaLaunchStats launch_stats;
  std::vector<HtaQueueLengthRow> queue_length_summary;
  std::vector<HtaMemoryBwRow> memory_bw_summary;
  std::vector<HtaKernelTypeRow> kernel_type_breakdown;  // this rank alone
  std::vector<HtaKernelTopRow> kernel_breakdown_top;
  HtaErrors hta_errors;             // what HTA raises on this rank alone
};

// One HTA run over a set of rank traces.
struct HtaResult {
  HtaRelease release = HtaRelease::k0_6_1;  // whose numbers these are
  std::vector<int64_t> ranks;
  std::vector<std::string> profiler_steps;  // step numbers left after the step filter, ascending
  bool step_filter_applied = false;
  std::vector<HtaTemporalRow> temporal_breakdown;
  std::vector<HtaIdleRow> idle_time_breakdown;
  std::vector<HtaOverlapRow> comm_comp_overlap;
  std::vector<HtaKernelTypeRow> kernel_type_breakdown;   // pooled over ranks, by sum descending
  std::vector<HtaKernelTopRow> kernel_breakdown_top;     // all ranks, by (kernel_type, name, rank)
  std::vector<HtaLaunchStats> launch_stats;
  std::vector<HtaQueueLengthRow> queue_length_summary;   // by (rank, stream)
  std::vector<HtaMemoryBwRow> memory_bw_summary;         // by (rank, name)
  HtaErrors hta_errors;                // the exceptions HTA raised on this run
  std::vector<std::string> notes;      // input handling that differs from HTA, negative durations, ...
};

}  // namespace stepscope::analysis::hta
