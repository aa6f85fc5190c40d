#include "report/json_report.h"

#include "analysis/kernel_class.h"
#include "report/diagnosis_json.h"
#include "report/critical_path_json.h"
#include "report/replay_json.h"
#include "report/hta_json.h"
#include "report/json_emit.h"

namespace stepscope::report {

using nlohmann::ordered_json;

namespace {

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

ordered_json distribution_json(const analysis::Distribution& d) {
  return {{"count", d.count}, {"mean", d.mean}, {"stddev", d.stddev}, {"min", d.min}, {"p25", d.p25},
          {"p50", d.p50},     {"p75", d.p75},   {"p90", d.p90},       {"p99", d.p99}, {"max", d.max}};
}

void emit_temporal(JsonEmit& e, const analysis::TemporalBreakdown& t) {
  e.begin_object();
  e.member("idle_us", us(t.idle_time_ns));
  e.member("compute_us", us(t.compute_time_ns));
  e.member("non_compute_us", us(t.non_compute_time_ns));
  e.member("kernel_time_us", us(t.kernel_time_ns));
  e.member("idle_pct", t.idle_pct);
  e.member("compute_pct", t.compute_pct);
  e.member("non_compute_pct", t.non_compute_pct);
  e.member("busy_us", us(t.busy_time_ns));
  e.member("communication_us", us(t.communication_time_ns));
  e.member("memory_us", us(t.memory_time_ns));
  e.member("activities", t.activities);
  e.end();
}

ordered_json import_json(const analysis::RankOrigin& o) {
  const trace::ImportStats& stats = o.import;
  ordered_json counters = ordered_json::object();
  for (size_t c = 0; c < static_cast<size_t>(trace::ImportCounter::kCount); ++c) {
    auto id = static_cast<trace::ImportCounter>(c);
    if (stats.count(id) > 0) counters[std::string(trace::counter_info(id).name)] = stats.count(id);
  }
  ordered_json log = ordered_json::array();
  for (const auto& e : stats.log()) {
    log.push_back({{"counter", std::string(trace::counter_info(e.counter).name)},
                   {"byte_offset", e.byte_offset},
                   {"message", e.message}});
  }
  return {{"events", o.events},
          {"gpu_activities", o.gpu_rows},
          {"skipped_records", stats.skipped_records()},
          {"counters", counters},
          {"log", log}};
}

// Each step with its temporal breakdown: written without a tree (a rank has
// one per step, a merge of 16,384 ranks hundreds of thousands).
void emit_steps(JsonEmit& e, const analysis::RankAnalysis& r) {
  e.begin_array();
  for (size_t i = 0; i < r.steps.steps.size(); ++i) {
    const auto& s = r.steps.steps[i];
    e.begin_object();
    e.member("step", s.step);
    e.member("cpu_start_us", us(s.cpu_start_ns));
    e.member("cpu_duration_us", us(s.cpu_duration_ns));
    e.member("gpu_activities", s.gpu_activities);
    e.member("gpu_start_us", us(s.gpu_start_ns));
    e.member("gpu_duration_us", us(s.gpu_duration_ns));
    if (i < r.temporal.steps.size()) {
      e.key("temporal_breakdown");
      emit_temporal(e, r.temporal.steps[i].breakdown);
    }
    e.end();
  }
  e.end();
}

ordered_json kernel_stat_json(const analysis::KernelStat& k) {
  return {{"name", k.name},
          {"type", std::string(analysis::to_string(k.cls))},
          {"family", std::string(analysis::to_string(k.family))},
          {"count", k.duration.count},
          {"total_us", us(k.duration.total_ns)},
          {"mean_us", k.duration.mean_us},
          {"min_us", us(k.duration.min_ns)},
          {"max_us", us(k.duration.max_ns)},
          {"stddev_us", k.duration.stddev_us},
          {"pct_of_type", k.pct_of_class}};
}

ordered_json kernels_json(const analysis::KernelStatsResult& k, ordered_json& types_out) {
  ordered_json top = ordered_json::array();
  types_out = ordered_json::array();
  for (const auto& c : k.classes) {
    if (c.duration.count == 0) continue;
    types_out.push_back({{"type", std::string(analysis::to_string(c.cls))},
                         {"total_us", us(c.duration.total_ns)},
                         {"count", c.duration.count},
                         {"pct", c.pct_of_all}});
    for (const auto& t : c.top) top.push_back(kernel_stat_json(t));
    if (c.others.duration.count > 0) {
      auto j = kernel_stat_json(c.others);
      j["distinct_names"] = c.others.distinct_names;
      top.push_back(std::move(j));
    }
  }
  return top;
}

ordered_json optional_json(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); }

// The derived counter values, added to `j`.
void add_derived(ordered_json& j, const analysis::CounterDerived& d) {
  j["cuda_core_flops"] = optional_json(d.cuda_core_flops);
  j["fp32_flops"] = optional_json(d.fp32_flops);
  j["fp16_flops"] = optional_json(d.fp16_flops);
  j["fp64_flops"] = optional_json(d.fp64_flops);
  j["tensor_core_insts"] = optional_json(d.tensor_core_insts);
  j["dram_bytes"] = optional_json(d.dram_bytes);
}

ordered_json counter_groups_json(const std::vector<analysis::CounterGroup>& groups) {
  ordered_json out = ordered_json::array();
  for (const auto& g : groups) {
    ordered_json x = {{"name", g.name}, {"ranges", g.ranges}};
    add_derived(x, g.derived);
    out.push_back(std::move(x));
  }
  return out;
}

// null for a trace without CUPTI range-profiler events.
ordered_json hardware_counters_json(const analysis::HardwareCountersResult& c) {
  if (c.ranges == 0) return nullptr;
  ordered_json j = {{"ranges", c.ranges},
                    {"devices", c.devices},
                    {"kernel_launches", c.kernel_launches},
                    {"matched_to_launches", c.matched_to_launches},
                    {"match_note", c.matched_to_launches ? ordered_json(nullptr) : ordered_json(c.match_note)}};
  ordered_json total;
  add_derived(total, c.total);
  j["total"] = std::move(total);
  ordered_json counters = ordered_json::array();
  for (const auto& t : c.counters) counters.push_back({{"name", t.name}, {"ranges", t.ranges}, {"total", t.total}});
  j["counters"] = std::move(counters);
  j["kernels"] = counter_groups_json(c.kernels);
  j["top_level_ops"] = counter_groups_json(c.ops);
  ordered_json rows = ordered_json::array();
  for (const auto& r : c.rows) {
    ordered_json x = {{"name", r.name},
                      {"device", r.device},
                      {"top_level_op", r.top_level_op},
                      {"bottom_level_op", r.bottom_level_op}};
    add_derived(x, r.derived);
    ordered_json values = ordered_json::object();
    for (const auto& [name, value] : r.counters) values[name] = value;
    x["counters"] = std::move(values);
    rows.push_back(std::move(x));
  }
  j["range_rows"] = std::move(rows);
  return j;
}

// A rank's analyses, as the members of its open section (the per-step parts
// written directly, the rest as small trees).
void emit_rank_analyses(JsonEmit& e, const analysis::RankAnalysis& r) {
  e.member("rank", r.rank);
  e.member("rank_source", r.origin.rank_source);
  e.member("file", r.source_path);
  if (const auto& d = r.origin.device) {
    e.member("device", {{"name", d->name}, {"total_memory_bytes", d->total_global_mem}, {"sms", d->num_sms}});
  }
  e.member("import", import_json(r.origin));
  e.key("steps");
  emit_steps(e, r);
  // Only for a file cut short (--salvage): whole files keep their schema.
  if (r.steps.cut_section != "none")
    e.member("salvage", {{"cut_section", r.steps.cut_section}, {"steps_dropped_by_cut", r.steps.dropped_by_cut}});
  e.key("temporal_breakdown");
  emit_temporal(e, r.temporal.rank);
  e.member("comm_comp_overlap_pct", r.overlap.overlap_pct ? ordered_json(*r.overlap.overlap_pct) : ordered_json(nullptr));
  ordered_json idle = ordered_json::array();
  for (const auto& st : r.idle.streams) {
    idle.push_back({{"device", st.device},
                    {"stream", st.stream},
                    {"idle_us", us(st.idle_ns)},
                    {"host_wait_us", us(st.host_wait_ns)},
                    {"kernel_wait_us", us(st.kernel_wait_ns)},
                    {"other_us", us(st.other_ns)},
                    {"host_wait_ratio", st.host_wait_ratio},
                    {"kernel_wait_ratio", st.kernel_wait_ratio},
                    {"other_ratio", st.other_ratio}});
  }
  e.member("idle_breakdown", idle);
  ordered_json types;
  e.member("top_kernels", kernels_json(r.kernels, types));
  e.member("kernel_types", types);
  ordered_json fams = ordered_json::array();
  for (const auto& f : r.kernels.families)
    fams.push_back({{"family", std::string(analysis::to_string(f.family))},
                    {"total_us", us(f.duration.total_ns)},
                    {"count", f.duration.count},
                    {"pct_of_compute", f.pct_of_compute}});
  e.member("compute_families", fams);
  const auto& l = r.launches;
  ordered_json worst = ordered_json::array();
  for (const auto& w : l.worst_launch_delays)
    worst.push_back({{"name", w.name},
                     {"stream", w.stream},
                     {"launch_start_us", us(w.launch_start_ns)},
                     {"launch_delay_us", us(w.launch_delay_ns)},
                     {"cpu_duration_us", us(w.cpu_duration_ns)},
                     {"gpu_duration_us", us(w.gpu_duration_ns)}});
  e.member("launch_stats", {{"launches", l.launches},
                       {"unmatched_kernels", l.unmatched_kernels},
                       {"cpu_duration_us", distribution_json(l.cpu_duration_us)},
                       {"gpu_duration_us", distribution_json(l.gpu_duration_us)},
                       {"launch_delay_us", distribution_json(l.launch_delay_us)},
                       {"start_latency_us", distribution_json(l.start_latency_us)},
                       {"launch_delay_outlier_threshold_us", us(l.launch_delay_threshold_ns)},
                       {"cpu_duration_outlier_threshold_us", us(l.cpu_duration_threshold_ns)},
                       {"launch_delay_outliers", l.launch_delay_outliers},
                       {"cpu_duration_outliers", l.cpu_duration_outliers},
                       {"negative_launch_delays", l.negative_launch_delays},
                       {"worst_launch_delays", worst}});
  ordered_json queues = ordered_json::array();
  for (const auto& q : r.queues.streams)
    queues.push_back({{"device", q.device},
                      {"stream", q.stream},
                      {"activities", q.activities},
                      {"mean_length", q.mean_length},
                      {"max_length", q.max_length},
                      {"time_at_limit_us", us(q.time_at_limit_ns)},
                      {"time_nonempty_us", us(q.time_nonempty_ns)},
                      {"samples", distribution_json(q.samples)}});
  e.member("queue_length", {{"limit", r.queues.queue_limit}, {"streams", queues}});
  ordered_json copies = ordered_json::array();
  for (const auto& c : r.copies.kinds)
    copies.push_back({{"name", c.name},
                      {"direction", std::string(analysis::to_string(c.direction))},
                      {"host_memory", std::string(analysis::to_string(c.host_memory))},
                      {"count", c.count},
                      {"bytes", c.bytes},
                      {"time_us", us(c.time_ns)},
                      {"achieved_gbps", c.achieved_gbps},
                      {"per_op_gbps", distribution_json(c.per_op_gbps)}});
  e.member("memory_bandwidth", copies);
  ordered_json devs = ordered_json::array();
  for (const auto& d : r.memory.devices)
    devs.push_back({{"device_type", d.device_type},
                    {"device_id", d.device_id},
                    {"samples", d.samples},
                    {"alloc_samples", d.alloc_samples},
                    {"free_samples", d.free_samples},
                    {"peak_allocated_bytes", d.peak_allocated_bytes},
                    {"peak_reserved_bytes", d.peak_reserved_bytes},
                    {"max_reserved_minus_allocated_bytes", d.max_reserved_minus_allocated_bytes}});
  e.member("allocator", {{"samples", r.memory.samples}, {"devices", devs}});
  e.member("hardware_counters", hardware_counters_json(r.counters));
}

ordered_json rank_json(const analysis::RankAnalysis& r) {
  TreeEmit e;
  e.begin_object();
  emit_rank_analyses(e, r);
  e.end();
  return e.take();
}

ordered_json spread_json(const analysis::RankSpread& s) {
  return {{"ranks", s.ranks},           {"min_us", us(s.min_ns)},
          {"median_us", us(s.median_ns)}, {"max_us", us(s.max_ns)},
          {"spread_us", us(s.spread_ns)}, {"fastest_rank", s.fastest_rank},
          {"slowest_rank", s.slowest_rank}};
}

ordered_json multi_json(const analysis::MultiRankAnalysis& m) {
  ordered_json steps = ordered_json::array();
  for (const auto& s : m.steps) steps.push_back({{"step", s.step}, {"cpu", spread_json(s.cpu)}, {"gpu", spread_json(s.gpu)}});
  ordered_json lateness = ordered_json::array();
  for (const auto& r : m.collectives.ranks)
    lateness.push_back({{"rank", r.rank},
                        {"collectives", r.collectives},
                        {"mean_lateness_us", r.mean_lateness_us},
                        {"max_lateness_us", us(r.max_lateness_ns)},
                        {"times_last", r.times_last},
                        {"straggler", r.straggler}});
  ordered_json gpu = ordered_json::array();
  for (const auto& r : m.gpu_time.ranks)
    gpu.push_back({{"rank", r.rank},
                   {"kernel_time_us", us(r.kernel_time_ns)},
                   {"busy_us", us(r.busy_time_ns)},
                   {"compute_us", us(r.compute_time_ns)},
                   {"communication_us", us(r.communication_time_ns)}});
  ordered_json clocks = ordered_json::array();
  for (const auto& c : m.clocks.ranks)
    clocks.push_back({{"rank", c.rank},
                      {"matched_calls", c.matched_calls},
                      {"disjoint_calls", c.disjoint_calls},
                      {"offset_us", us(c.offset_ns)},
                      {"corrected", c.corrected}});
  ordered_json kernels = ordered_json::array();
  for (const auto& k : m.kernels.top)
    kernels.push_back({{"name", k.name},
                       {"type", std::string(analysis::to_string(k.cls))},
                       {"family", std::string(analysis::to_string(k.family))},
                       {"ranks", k.ranks},
                       {"count", k.count},
                       {"total_us", us(k.total_ns)},
                       {"mean_us", k.count > 0 ? us(k.total_ns) / static_cast<double>(k.count) : 0.0},
                       {"min_us", us(k.min_ns)},
                       {"p50_us", k.p50_ns / 1000.0},
                       {"p90_us", k.p90_ns / 1000.0},
                       {"p99_us", k.p99_ns / 1000.0},
                       {"max_us", us(k.max_ns)},
                       {"max_rank", k.max_rank},
                       {"pct_of_type", k.pct_of_class}});
  return {{"ranks", m.ranks},
          {"clock_alignment",
           {{"status", m.clocks.status}, {"reference_rank", m.clocks.reference_rank}, {"ranks", clocks}}},
          {"steps", steps},
          {"collective_skew",
           {{"source", m.collectives.source},
            {"withheld", m.collectives.withheld},
            {"matched_calls", m.collectives.matched_calls},
            {"unmatched_calls", m.collectives.unmatched_calls},
            {"mean_skew_us", m.collectives.mean_skew_us},
            {"max_skew_us", us(m.collectives.max_skew_ns)},
            {"ranks", lateness},
            {"stragglers", m.collectives.stragglers}}},
          {"gpu_time",
           {{"ranks", gpu},
            {"mean_compute_us", m.gpu_time.mean_compute_us},
            {"stddev_compute_us", m.gpu_time.stddev_compute_us},
            {"cv_compute", m.gpu_time.cv_compute},
            {"compute", spread_json(m.gpu_time.compute)},
            {"busy", spread_json(m.gpu_time.busy)}}},
          {"kernels", {{"quantile_relative_error", m.kernels.relative_error}, {"top", kernels}}}};
}

// The diagnosis's per-rank parts of rank `i`, as members of its open section.
void emit_rank_diagnosis(JsonEmit& e, const AnalyzeReport& report, size_t i) {
  if (!report.diagnosis) return;
  if (i < report.diagnosis->attribution.size()) {
    e.key("attribution");
    emit_attribution(e, report.diagnosis->attribution[i]);
  }
  if (i < report.diagnosis->replay.size()) {
    e.key("replay");
    emit_replay(e, report.diagnosis->replay[i]);
  }
  if (i < report.diagnosis->critical_path.size()) {
    e.key("critical_path");
    emit_critical_path(e, report.diagnosis->critical_path[i]);
  }
}

// One rank's section: its analyses, with the diagnosis's per-rank parts.
ordered_json rank_section(const AnalyzeReport& report, size_t i) {
  ordered_json rj = rank_json(report.ranks[i]);
  TreeEmit e;
  e.begin_object();
  emit_rank_diagnosis(e, report, i);
  e.end();
  ordered_json parts = e.take();
  for (auto it = parts.begin(); it != parts.end(); ++it) rj[it.key()] = std::move(it.value());
  if (report.hta) {
    static const std::vector<analysis::hta::HtaKernelTypeRow> kNone;
    apply_hta_to_rank(*report.hta, i < report.hta_rank_kernel_types.size() ? report.hta_rank_kernel_types[i] : kNone,
                      report.ranks[i].rank, rj);
  }
  return rj;
}

// Rank `i`'s section as text, as serializer::dump(rank_section(report, i),
// ...) writes it at `depth`, through TextEmit: the per-step parts and the
// diagnosis's parts (most of a rank's text) without a tree.
void write_rank_section(std::string& out, const AnalyzeReport& report, size_t i, int indent, unsigned depth) {
  TextEmit e(out, indent, depth);
  if (report.hta) {  // HTA's columns go after the diagnosis's parts
    e.value(rank_section(report, i));
    return;
  }
  e.begin_object();
  emit_rank_analyses(e, report.ranks[i]);
  emit_rank_diagnosis(e, report, i);
  e.end();
}

// Everything but the rank sections; `ranks` holds what the caller puts there.
ordered_json analyze_document(const AnalyzeReport& report, ordered_json ranks) {
  ordered_json j;
  j["schema"] = "stepscope.analyze";
  j["schema_version"] = kJsonSchemaVersion;
  j["tool_version"] = kToolVersion;
  j["mode"] = report.mode;
  j["inputs"] = report.inputs;
  j["uncompressed_bytes"] = report.uncompressed_bytes;
  j["read_seconds"] = report.read_seconds;
  j["analysis_seconds"] = report.analysis_seconds;
  j["notes"] = report.notes;
  j["warnings"] = report.warnings;
  j["ranks"] = std::move(ranks);
  j["multi_rank"] = report.ranks.size() >= 2 ? multi_json(report.multi) : ordered_json(nullptr);
  if (report.diagnosis && report.ranks.size() >= 2) {
    j["job_replay"] = job_replay_json(report.diagnosis->job_replay);
    j["job_critical_path"] = job_critical_path_json(report.diagnosis->job_critical_path);
  }
  if (report.hta) j["hta"] = hta_tables_json(*report.hta);
  if (report.diagnosis) {
    j["primary_bottleneck"] = report.diagnosis->primary_bottleneck;
    j["diagnosis"] = diagnosis_json(*report.diagnosis);
  }
  return j;
}

}  // namespace

ordered_json build_analyze_json(const AnalyzeReport& report) {
  ordered_json ranks = ordered_json::array();
  for (size_t i = 0; i < report.ranks.size(); ++i) ranks.push_back(rank_section(report, i));
  return analyze_document(report, std::move(ranks));
}

bool write_analyze_json(const AnalyzeReport& report, int indent, const JsonSink& sink) {
  // The document is dumped with a placeholder for the ranks, which are then
  // dumped one at a time where it stands, at the depth dump() gives them.
  // The placeholder's text, `"ranks":` then the string, cannot occur inside a
  // string of the document: there every quote is escaped.
  const std::string text = analyze_document(report, "\x01ranks\x01").dump(indent);
  const bool pretty = indent >= 0;
  const std::string key = pretty ? "\"ranks\": " : "\"ranks\":";
  const std::string value = "\"\\u0001ranks\\u0001\"";
  const size_t at = text.find(key + value);
  if (at == std::string::npos) return false;  // unreachable: the document always holds the placeholder
  const size_t value_at = at + key.size();
  if (!sink(std::string_view(text).substr(0, value_at))) return false;
  const unsigned step = pretty ? static_cast<unsigned>(indent) : 0;
  std::string piece;
  if (report.ranks.empty()) {
    piece = "[]";
  } else {
    piece = pretty ? "[\n" : "[";
    for (size_t i = 0; i < report.ranks.size(); ++i) {
      if (i > 0) piece += pretty ? ",\n" : ",";
      piece.append(2 * step, ' ');
      write_rank_section(piece, report, i, indent, 2 * step);
      if (!sink(piece)) return false;
      piece.clear();
    }
    if (pretty) piece += "\n" + std::string(step, ' ');
    piece += "]";
  }
  if (!sink(piece)) return false;
  return sink(std::string_view(text).substr(value_at + value.size()));
}

}  // namespace stepscope::report
