#include "summary/summary_json.h"

#include <array>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "diagnose/part_json.h"
#include "summary/cbor_value.h"
#include "summary/one_line.h"

namespace nlohmann {
// std::optional as null or the value (nlohmann 3.11 has no serializer for it).
template <typename T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) {
    if (v)
      j = *v;
    else
      j = nullptr;
  }
  template <typename BasicJson>
  static void from_json(const BasicJson& j, std::optional<T>& v) {
    if (j.is_null())
      v.reset();
    else
      v = j.template get<T>();
  }
};
}  // namespace nlohmann

using nlohmann::json;

namespace stepscope {

namespace {

// Every from_json below reads either tree: nlohmann::json (a body built in
// memory, the tests) or summary::BodyJson (a file's body, in the arena).
template <typename J>
concept JsonTree = nlohmann::detail::is_basic_json<J>::value;

// NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE with from_json for either tree (the
// library's macro takes nlohmann::json alone).
#define SUMMARY_FIELDS(Type, ...)                                                                   \
  inline void to_json(json& nlohmann_json_j, const Type& nlohmann_json_t) {                         \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                          \
  }                                                                                                 \
  template <JsonTree J>                                                                             \
  void from_json(const J& nlohmann_json_j, Type& nlohmann_json_t) {                                 \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_FROM, __VA_ARGS__))                        \
  }

// An enum as its number, checked on the way back: a summary from a damaged
// or foreign file must not index past a name table.
template <typename E>
void enum_out(json& j, E e) {
  j = static_cast<int>(e);
}
template <JsonTree J, typename E>
void enum_in(const J& j, E& e, int count, const char* what) {
  const int v = j.template get<int>();
  if (v < 0 || v >= count) throw std::runtime_error(std::string(what) + " " + std::to_string(v) + " out of range");
  e = static_cast<E>(v);
}

}  // namespace

namespace trace {
inline void to_json(json& j, ImportCounter e) { enum_out(j, e); }
template <JsonTree J>
inline void from_json(const J& j, ImportCounter& e) {
  enum_in(j, e, static_cast<int>(ImportCounter::kCount), "import counter");
}
SUMMARY_FIELDS(DeviceProperties, id, name, total_global_mem, compute_major, compute_minor, num_sms)
SUMMARY_FIELDS(ProcessIdentity, pid, process_name, rank, first_ns, last_ns)

// The counters and the log, replayed through add() so the store's rules
// (five logged per counter, totals) hold for the copy too.
void to_json(json& j, const ImportStats& s) {
  json counts = json::array();
  for (size_t c = 0; c < static_cast<size_t>(ImportCounter::kCount); ++c)
    counts.push_back(s.count(static_cast<ImportCounter>(c)));
  json log = json::array();
  for (const ImportLogEntry& e : s.log())
    log.push_back({{"counter", e.counter}, {"byte_offset", e.byte_offset}, {"message", e.message}});
  j = {{"counts", counts}, {"log", log}};
}
template <JsonTree J>
void from_json(const J& j, ImportStats& s) {
  const auto counts = j.at("counts").template get<std::vector<uint64_t>>();
  if (counts.size() != static_cast<size_t>(ImportCounter::kCount))
    throw std::runtime_error("import counts: " + std::to_string(counts.size()) + " counters, expected " +
                             std::to_string(static_cast<int>(ImportCounter::kCount)));
  s = ImportStats{};
  for (const auto& e : j.at("log")) {
    const auto c = e.at("counter").template get<ImportCounter>();
    if (s.count(c) >= counts[static_cast<size_t>(c)] || s.count(c) >= ImportStats::kMaxLoggedPerCounter)
      throw std::runtime_error("import log: more entries than counted");
    s.add(c, e.at("byte_offset").template get<uint64_t>(), e.at("message").template get<std::string>());
  }
  for (size_t c = 0; c < counts.size(); ++c) {
    const auto id = static_cast<ImportCounter>(c);
    s.add_silent(id, counts[c] - s.count(id));
  }
}
}  // namespace trace

namespace analysis {
inline void to_json(json& j, KernelClass e) { enum_out(j, e); }
template <JsonTree J>
inline void from_json(const J& j, KernelClass& e) { enum_in(j, e, kKernelClassCount, "kernel class"); }
inline void to_json(json& j, KernelFamily e) { enum_out(j, e); }
template <JsonTree J>
inline void from_json(const J& j, KernelFamily& e) { enum_in(j, e, kKernelFamilyCount, "kernel family"); }
inline void to_json(json& j, CopyDirection e) { enum_out(j, e); }
template <JsonTree J>
inline void from_json(const J& j, CopyDirection& e) {
  enum_in(j, e, static_cast<int>(CopyDirection::kUnknown) + 1, "copy direction");
}
inline void to_json(json& j, HostMemory e) { enum_out(j, e); }
template <JsonTree J>
inline void from_json(const J& j, HostMemory& e) {
  enum_in(j, e, static_cast<int>(HostMemory::kUnknown) + 1, "host memory");
}
inline void to_json(json& j, CollectiveSource e) { enum_out(j, e); }
template <JsonTree J>
inline void from_json(const J& j, CollectiveSource& e) {
  enum_in(j, e, static_cast<int>(CollectiveSource::kHostOps) + 1, "collective source");
}

SUMMARY_FIELDS(Distribution, count, mean, stddev, min, p25, p50, p75, p90, p99, max)
SUMMARY_FIELDS(StepSpan, step, row, cpu_start_ns, cpu_end_ns, cpu_duration_ns, gpu_activities,
                                   gpu_start_ns, gpu_end_ns, gpu_duration_ns, annotation_gpu_start_ns,
                                   annotation_gpu_end_ns)
SUMMARY_FIELDS(StepsResult, steps, unattributed_activities, duplicate_step_numbers, dropped_by_cut,
                                   cut_section, cut_touches_steps)
SUMMARY_FIELDS(TemporalBreakdown, activities, start_ns, end_ns, kernel_time_ns, busy_time_ns,
                                   idle_time_ns, compute_time_ns, non_compute_time_ns, communication_time_ns,
                                   memory_time_ns, idle_pct, compute_pct, non_compute_pct)
SUMMARY_FIELDS(StepBreakdown, step, breakdown)
SUMMARY_FIELDS(TemporalResult, rank, steps)
SUMMARY_FIELDS(DurationStats, count, total_ns, min_ns, max_ns, mean_us, stddev_us)
SUMMARY_FIELDS(KernelStat, name, cls, family, distinct_names, duration, pct_of_class)
SUMMARY_FIELDS(ClassKernels, cls, duration, distinct_names, pct_of_all, top, others)
SUMMARY_FIELDS(FamilyTotal, family, duration, pct_of_compute)
// The sketch's state; restore() refuses a state that breaks its rules.
void to_json(json& j, const QuantileSketch& q) {
  json index = json::array(), count = json::array();
  for (const auto& [i, c] : q.buckets()) {
    index.push_back(i);
    count.push_back(c);
  }
  j = {{"zeros", q.zeros()}, {"index", index}, {"count", count}, {"min", q.min()}, {"max", q.max()}};
}
template <JsonTree J>
void from_json(const J& j, QuantileSketch& q) {
  const auto index = j.at("index").template get<std::vector<int32_t>>();
  const auto count = j.at("count").template get<std::vector<uint64_t>>();
  if (index.size() != count.size()) throw std::runtime_error("quantile sketch: index and count differ in length");
  std::vector<std::pair<int32_t, uint64_t>> buckets;
  for (size_t k = 0; k < index.size(); ++k) buckets.push_back({index[k], count[k]});
  if (!q.restore(j.at("zeros").template get<uint64_t>(), std::move(buckets), j.at("min").template get<int64_t>(),
                 j.at("max").template get<int64_t>()))
    throw std::runtime_error("quantile sketch: buckets out of order or range, a zero count, or min > max");
}
SUMMARY_FIELDS(KernelNameSketch, name, cls, family, total_ns, durations)
SUMMARY_FIELDS(KernelStatsResult, total_ns, classes, families, by_name)
SUMMARY_FIELDS(StreamIdle, device, stream, activities, span_ns, busy_ns, idle_ns, host_wait_ns,
                                   kernel_wait_ns, other_ns, host_wait_gaps, kernel_wait_gaps, other_gaps,
                                   host_wait_ratio, kernel_wait_ratio, other_ratio)
SUMMARY_FIELDS(IdleBreakdownResult, kernel_wait_threshold_ns, streams)
SUMMARY_FIELDS(CommOverlap, communication_time_ns, computation_time_ns, overlapped_time_ns,
                                   overlap_pct)
SUMMARY_FIELDS(LaunchRecord, name, stream, launch_start_ns, cpu_duration_ns, gpu_duration_ns,
                                   launch_delay_ns, start_latency_ns)
SUMMARY_FIELDS(LaunchStats, launches, unmatched_kernels, cpu_duration_us, gpu_duration_us,
                                   launch_delay_us, start_latency_us, launch_delay_threshold_ns,
                                   cpu_duration_threshold_ns, launch_delay_outliers, cpu_duration_outliers,
                                   negative_launch_delays, worst_launch_delays)
SUMMARY_FIELDS(StreamQueue, device, stream, activities, window_start_ns, window_end_ns,
                                   mean_length, max_length, time_at_limit_ns, time_nonempty_ns, samples)
SUMMARY_FIELDS(QueueLengthResult, queue_limit, streams)
SUMMARY_FIELDS(CopyKindStats, name, direction, host_memory, count, with_bytes, bytes, time_ns,
                                   achieved_gbps, per_op_gbps)
SUMMARY_FIELDS(MemoryBandwidthResult, kinds, total_bytes, total_time_ns)
SUMMARY_FIELDS(DeviceMemory, device_type, device_id, samples, alloc_samples, free_samples,
                                   allocated_bytes_total, freed_bytes_total, peak_allocated_bytes,
                                   peak_allocated_ts_ns, peak_reserved_bytes, max_reserved_minus_allocated_bytes,
                                   first_allocated_bytes, last_allocated_bytes)
SUMMARY_FIELDS(MemoryTimelineResult, samples, malformed_samples, devices)
SUMMARY_FIELDS(CollectiveCall, op, ordinal, stream, start_ns, end_ns, row)
SUMMARY_FIELDS(CollectiveSequence, ops, calls, source)
SUMMARY_FIELDS(CounterDerived, cuda_core_flops, fp32_flops, fp16_flops, fp64_flops,
                                   tensor_core_insts, dram_bytes)
SUMMARY_FIELDS(CounterRangeRow, name, device, top_level_op, bottom_level_op, derived, counters)
SUMMARY_FIELDS(CounterGroup, name, ranges, derived)
SUMMARY_FIELDS(CounterTotal, name, ranges, total)
SUMMARY_FIELDS(HardwareCountersResult, ranges, devices, kernel_launches, matched_to_launches,
                                   match_note, total, counters, kernels, ops, rows)
SUMMARY_FIELDS(RankOrigin, rank_source, device, world_size, events, gpu_rows, import)
SUMMARY_FIELDS(RankAnalysis, rank, source_path, base_time_ns, origin, gpu_activities,
                                   dropped_negative_activities, steps, temporal, kernels, idle, overlap, launches,
                                   queues, copies, memory, collectives, counters)

// The options without the timeline hook (a summary is always of the exact timeline).
void to_json(json& j, const AnalysisOptions& o) {
  j = {{"kernel_wait_threshold_ns", o.kernel_wait_threshold_ns}, {"top_kernels", o.top_kernels},
       {"launch_delay_outlier_ns", o.launch_delay_outlier_ns},   {"cpu_launch_outlier_ns", o.cpu_launch_outlier_ns},
       {"worst_launches", o.worst_launches},                     {"queue_limit", o.queue_limit},
       {"straggler_lateness_ns", o.straggler_lateness_ns}};
}
template <JsonTree J>
void from_json(const J& j, AnalysisOptions& o) {
  j.at("kernel_wait_threshold_ns").get_to(o.kernel_wait_threshold_ns);
  j.at("top_kernels").get_to(o.top_kernels);
  j.at("launch_delay_outlier_ns").get_to(o.launch_delay_outlier_ns);
  j.at("cpu_launch_outlier_ns").get_to(o.cpu_launch_outlier_ns);
  j.at("worst_launches").get_to(o.worst_launches);
  j.at("queue_limit").get_to(o.queue_limit);
  j.at("straggler_lateness_ns").get_to(o.straggler_lateness_ns);
}
}  // namespace analysis

namespace {

// A fixed-length array of counts (one per bucket, edge kind or path
// category), refused at any other length.
template <size_t N, JsonTree J>
std::array<int64_t, N> fixed_array(const J& j, const char* what) {
  if (!j.is_array() || j.size() != N)
    throw std::runtime_error(std::string(what) + ": expected an array of " + std::to_string(N) + " integers");
  std::array<int64_t, N> a{};
  for (size_t i = 0; i < N; ++i) a[i] = j[i].template get<int64_t>();
  return a;
}

}  // namespace

namespace diagnose {
void to_json(json& j, const StepAttribution& s) {
  j = {{"step", s.step}, {"start_ns", s.start_ns}, {"end_ns", s.end_ns}, {"ns", s.ns}};
}
template <JsonTree J>
void from_json(const J& j, StepAttribution& s) {
  j.at("step").get_to(s.step);
  j.at("start_ns").get_to(s.start_ns);
  j.at("end_ns").get_to(s.end_ns);
  s.ns = fixed_array<kBucketCount>(j.at("ns"), "attribution buckets");
}
// The spans are left out: what the detectors read of them is in their parts.
SUMMARY_FIELDS(RankAttribution, rank, from_profiler_steps, gpu_activity, steps, total)
}  // namespace diagnose

namespace whatif {
inline void to_json(json& j, PathCategory e) { enum_out(j, e); }
template <JsonTree J>
inline void from_json(const J& j, PathCategory& e) { enum_in(j, e, kPathCategoryCount, "path category"); }
SUMMARY_FIELDS(StepFidelity, step, measured_ns, replayed_ns)
SUMMARY_FIELDS(ProfilerSettings, shapes, memory, stack, flops, cpu_ops, runtime_calls,
                                   memory_events, python_events)
SUMMARY_FIELDS(RankReplay::Unprofiled, estimated, settings, profiled_step_ns, unprofiled_step_ns,
                                   model_cost_ns, scale, calibrated, measured_step_ms)
void to_json(json& j, const RankReplay& r) {
  j = {{"rank", r.rank},
       {"replayed", r.replayed},
       {"host_marks", r.host_marks},
       {"gpu_nodes", r.gpu_nodes},
       {"edges", r.edges},
       {"blocking_calls", r.blocking_calls},
       {"launch_latency_ns", r.launch_latency_ns},
       {"stream_gap_ns", r.stream_gap_ns},
       {"sync_release_ns", r.sync_release_ns},
       {"gpu_residual_ns", r.gpu_residual_ns},
       {"host_residual_ns", r.host_residual_ns},
       {"steps", r.steps},
       {"max_abs_error_pct", r.max_abs_error_pct},
       {"notes", r.notes},
       {"unprofiled", r.unprofiled}};
}
// combined_saving_ns is not carried: it needs the set's reported findings.
template <JsonTree J>
void from_json(const J& j, RankReplay& r) {
  j.at("rank").get_to(r.rank);
  j.at("replayed").get_to(r.replayed);
  j.at("host_marks").get_to(r.host_marks);
  j.at("gpu_nodes").get_to(r.gpu_nodes);
  r.edges = fixed_array<kEdgeKindCount>(j.at("edges"), "replay edges");
  j.at("blocking_calls").get_to(r.blocking_calls);
  j.at("launch_latency_ns").get_to(r.launch_latency_ns);
  j.at("stream_gap_ns").get_to(r.stream_gap_ns);
  j.at("sync_release_ns").get_to(r.sync_release_ns);
  j.at("gpu_residual_ns").get_to(r.gpu_residual_ns);
  j.at("host_residual_ns").get_to(r.host_residual_ns);
  j.at("steps").get_to(r.steps);
  j.at("max_abs_error_pct").get_to(r.max_abs_error_pct);
  j.at("notes").get_to(r.notes);
  j.at("unprofiled").get_to(r.unprofiled);
}
// Equal names read on one thread share one string: a set's ranks name the
// same kernels in every step's longest segments, and a merge keeps them all
// (the pool forgets what it saw past 100,000 names).
SharedName shared_name(const std::string& text) {
  thread_local std::unordered_map<std::string, SharedName> seen;
  if (seen.size() > 100'000) seen.clear();
  auto [it, fresh] = seen.try_emplace(text);
  if (fresh) it->second = SharedName(text);
  return it->second;
}
void to_json(json& j, const NamedSegment& n) {
  j = {{"kind", n.kind}, {"category", n.category}, {"name", n.name.str()}, {"start_ns", n.start_ns},
       {"dur_ns", n.dur_ns}};
}
template <JsonTree J>
void from_json(const J& j, NamedSegment& n) {
  j.at("kind").get_to(n.kind);
  j.at("category").get_to(n.category);
  n.name = shared_name(j.at("name").template get_ref<const std::string&>());
  j.at("start_ns").get_to(n.start_ns);
  j.at("dur_ns").get_to(n.dur_ns);
}
// The spans are left out: they draw the path on the timeline, which needs the
// rank's events (a merged report has none); per step they are hundreds.
void to_json(json& j, const StepCriticalPath& s) {
  j = {{"step", s.step}, {"start_ns", s.start_ns}, {"end_ns", s.end_ns}, {"top", s.top},
       {"by_category_ns", s.by_category_ns}};
}
template <JsonTree J>
void from_json(const J& j, StepCriticalPath& s) {
  j.at("step").get_to(s.step);
  j.at("start_ns").get_to(s.start_ns);
  j.at("end_ns").get_to(s.end_ns);
  s.by_category_ns = fixed_array<kPathCategoryCount>(j.at("by_category_ns"), "critical path categories");
  j.at("top").get_to(s.top);
}
void to_json(json& j, const RankCriticalPath& p) {
  j = {{"rank", p.rank}, {"steps", p.steps}, {"total_ns", p.total_ns}, {"wall_ns", p.wall_ns}, {"notes", p.notes}};
}
template <JsonTree J>
void from_json(const J& j, RankCriticalPath& p) {
  j.at("rank").get_to(p.rank);
  j.at("steps").get_to(p.steps);
  p.total_ns = fixed_array<kPathCategoryCount>(j.at("total_ns"), "critical path categories");
  j.at("wall_ns").get_to(p.wall_ns);
  j.at("notes").get_to(p.notes);
}
}  // namespace whatif

namespace diagnose {
SUMMARY_FIELDS(RankDiagnosis, attribution, replay, critical_path, hardware)
}  // namespace diagnose

namespace summary {

inline void to_json(json& j, const SummarySettings& s) {
  j = {{"analysis", s.analysis}, {"salvage", s.salvage}, {"diagnosis", s.diagnosis}};
}
// The diagnosis options stay a nlohmann::json (settings_key prints them).
template <JsonTree J>
void from_json(const J& j, SummarySettings& s) {
  j.at("analysis").get_to(s.analysis);
  j.at("salvage").get_to(s.salvage);
  s.diagnosis = json(j.at("diagnosis"));
}

inline void to_json(json& j, SummaryKind e) { enum_out(j, e); }
template <JsonTree J>
inline void from_json(const J& j, SummaryKind& e) { enum_in(j, e, kSummaryKindCount, "summary kind"); }

SUMMARY_FIELDS(RankSummary, tool_version, kind, settings, files, uncompressed_bytes, file_bytes, notes,
                                   warnings, declared_rank, file_name_rank, process, analysis, ranks_in_set,
                                   rank_diagnosis)

json diagnosis_parts(const RankSummary& s) {
  if (s.diagnosis.empty()) return json::object();
  try {
    return parse_cbor_value(s.diagnosis);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("diagnosis parts: ") + e.what());
  }
}

json summary_to_json(const RankSummary& s) {
  json j = s;
  // An encoded CBOR item in a byte string (RFC 8949, 3.4.5.1): a reader
  // keeps the bytes without building the tree until the parts are used.
  j["diagnosis"] = json::binary(s.diagnosis);
  return j;
}

namespace {

// What the analyses index by: a summary that breaks these would read out of bounds.
void check_indexes(const RankSummary& s) {
  const analysis::RankAnalysis& a = s.analysis;
  // Calls of each operation are numbered 0..n-1 (the k-th call of that
  // operation on the rank): matching across ranks indexes by that number.
  std::vector<uint32_t> calls_of(a.collectives.ops.size(), 0);
  for (const analysis::CollectiveCall& c : a.collectives.calls) {
    if (c.op >= a.collectives.ops.size())
      throw std::runtime_error("collective call of operation " + std::to_string(c.op) + " of " +
                               std::to_string(a.collectives.ops.size()));
    ++calls_of[c.op];
  }
  std::vector<std::vector<bool>> seen(calls_of.size());
  for (size_t op = 0; op < calls_of.size(); ++op) seen[op].assign(calls_of[op], false);
  for (const analysis::CollectiveCall& c : a.collectives.calls) {
    if (c.ordinal >= calls_of[c.op] || seen[c.op][c.ordinal])
      throw std::runtime_error("collective call numbers of '" + one_line(a.collectives.ops[c.op], 60) + "' are not 0.." +
                               std::to_string(calls_of[c.op] - 1) + " once each");
    seen[c.op][c.ordinal] = true;
  }
  if (a.temporal.steps.size() != a.steps.steps.size())
    throw std::runtime_error("temporal steps: " + std::to_string(a.temporal.steps.size()) + " for " +
                             std::to_string(a.steps.steps.size()) + " steps");
  if (s.kind != SummaryKind::kRank && s.notes.empty() && s.warnings.empty())
    throw std::runtime_error("a summary without a rank says neither note nor warning");
  if (s.files.empty()) throw std::runtime_error("a summary of no trace file");
  if (s.kind != SummaryKind::kRank && !s.diagnosis.empty())
    throw std::runtime_error("a summary without a rank carries diagnosis parts");
}

template <JsonTree J>
RankSummary from_tree(const J& j) {
  try {
    RankSummary s = j.template get<RankSummary>();
    const J& parts = j.at("diagnosis");
    if (!parts.is_binary()) throw std::runtime_error("diagnosis: not a byte string");
    s.diagnosis = parts.get_binary();
    check_indexes(s);
    return s;
  } catch (const json::exception& e) {
    throw std::runtime_error(diagnose::json_error_text(e));
  }
}

}  // namespace

RankSummary summary_from_json(const json& j) { return from_tree(j); }

RankSummary summary_from_body(const BodyJson& j) { return from_tree(j); }


std::string settings_key(const SummarySettings& s) { return json(s).dump(); }

json diagnosis_settings(const diagnose::DiagnoseOptions& o) {
  return {{"disabled_detectors", o.disabled_detectors},
          {"replay", o.replay},
          {"unprofiled_step_ms", o.unprofiled_step_ms},
          {"tiny_kernel_us", o.tiny_kernel_us},
          {"matmul_efficient_fraction", o.matmul_efficient_fraction},
          {"fp32_model_matmul_share", o.fp32_model_matmul_share},
          {"low_occupancy_pct", o.low_occupancy_pct},
          {"small_collective_bytes", o.small_collective_bytes}};
}

}  // namespace summary
}  // namespace stepscope

#undef SUMMARY_FIELDS
