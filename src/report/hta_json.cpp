#include "report/hta_json.h"

#include <fmt/format.h>

#include <map>

#include "analysis/hta_compat/kernel_type.h"

namespace stepscope::report {

using nlohmann::ordered_json;
namespace hta = analysis::hta;

namespace {

ordered_json opt(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); }

ordered_json describe_json(const hta::HtaDescribe& d) {
  return {{"count", d.count}, {"mean", opt(d.mean)}, {"std", opt(d.std)}, {"min", opt(d.min)},
          {"25%", opt(d.p25)}, {"50%", opt(d.p50)},  {"75%", opt(d.p75)}, {"max", opt(d.max)}};
}

ordered_json temporal_row_json(const hta::HtaTemporalRow& t) {
  ordered_json j = {{"idle_us", t.idle_time_us},
                    {"compute_us", t.compute_time_us},
                    {"non_compute_us", t.non_compute_time_us},
                    {"kernel_time_us", t.kernel_time_us},
                    {"idle_pct", opt(t.idle_time_pctg)},
                    {"compute_pct", opt(t.compute_time_pctg)},
                    {"non_compute_pct", opt(t.non_compute_time_pctg)}};
  if (t.no_gpu_events) j["no_gpu_events"] = true;
  if (t.clamped_negative_durations > 0) j["clamped_negative_durations"] = t.clamped_negative_durations;
  return j;
}

ordered_json kernel_types_json(const std::vector<hta::HtaKernelTypeRow>& rows) {
  ordered_json out = ordered_json::array();
  for (const auto& r : rows) out.push_back({{"type", r.kernel_type}, {"total_us", r.sum_us}, {"pct", opt(r.percentage)}});
  return out;
}

ordered_json top_row_json(const hta::HtaKernelTopRow& k) {
  return {{"name", k.name},
          {"type", std::string(hta::to_string(k.kernel_type))},
          {"rank", k.rank},
          {"total_us", k.sum_us},
          {"mean_us", k.mean_us},
          {"min_us", k.min_us},
          {"max_us", k.max_us},
          {"stddev_us", k.stddev}};
}

}  // namespace

ordered_json hta_tables_json(const hta::HtaResult& h) {
  ordered_json j;
  j["produced_as"] =
      fmt::format("Holistic Trace Analysis {} with default arguments (see docs/hta_compat.md)", hta::to_string(h.release));
  j["ranks"] = h.ranks;
  j["profiler_steps"] = h.profiler_steps;
  j["step_filter_applied"] = h.step_filter_applied;
  ordered_json temporal = ordered_json::array();
  for (const auto& t : h.temporal_breakdown) {
    auto row = temporal_row_json(t);
    row["rank"] = t.rank;
    temporal.push_back(std::move(row));
  }
  j["temporal_breakdown"] = temporal;
  ordered_json overlap = ordered_json::array();
  for (const auto& o : h.comm_comp_overlap) overlap.push_back({{"rank", o.rank}, {"comp_comm_overlap_pctg", opt(o.comp_comm_overlap_pctg)}});
  j["comm_comp_overlap"] = overlap;
  j["kernel_type_breakdown"] = kernel_types_json(h.kernel_type_breakdown);
  ordered_json top = ordered_json::array();
  for (const auto& k : h.kernel_breakdown_top) top.push_back(top_row_json(k));
  j["kernel_breakdown_top"] = top;
  ordered_json idle = ordered_json::array();
  for (const auto& r : h.idle_time_breakdown)
    idle.push_back({{"rank", r.rank}, {"stream", r.stream}, {"idle_category", r.idle_category},
                    {"idle_time", r.idle_time}, {"idle_time_ratio", opt(r.idle_time_ratio)}});
  j["idle_time_breakdown"] = idle;
  ordered_json launches = ordered_json::array();
  for (const auto& l : h.launch_stats)
    launches.push_back({{"rank", l.rank},
                        {"cpu_duration", describe_json(l.cpu_duration)},
                        {"gpu_duration", describe_json(l.gpu_duration)},
                        {"launch_delay", describe_json(l.launch_delay)}});
  j["launch_stats"] = launches;
  ordered_json queues = ordered_json::array();
  for (const auto& q : h.queue_length_summary)
    queues.push_back({{"rank", q.rank}, {"stream", q.stream}, {"queue_length", describe_json(q.queue_length)}});
  j["queue_length_summary"] = queues;
  ordered_json bw = ordered_json::array();
  for (const auto& m : h.memory_bw_summary)
    bw.push_back({{"rank", m.rank}, {"name", m.name}, {"memory_bw_gbps", describe_json(m.memory_bw_gbps)}});
  j["memory_bw_summary"] = bw;
  // Where HTA 0.6.1 raises instead of answering, its error text, and the
  // answer stepscope gives in its place is in the tables above.
  ordered_json errors = ordered_json::object();
  auto add_error = [&](const char* table, const std::string& e) {
    if (!e.empty()) errors[table] = e;
  };
  add_error("temporal_breakdown", h.hta_errors.temporal_breakdown);
  add_error("idle_time_breakdown", h.hta_errors.idle_time_breakdown);
  add_error("queue_length_summary", h.hta_errors.queue_length_summary);
  add_error("memory_bw_summary", h.hta_errors.memory_bw_summary);
  j["hta_would_fail"] = errors;
  j["notes"] = h.notes;
  return j;
}

void apply_hta_to_rank(const hta::HtaResult& h, const std::vector<hta::HtaKernelTypeRow>& rank_kernel_types,
                       int64_t rank, ordered_json& rj) {
  for (const auto& t : h.temporal_breakdown)
    if (t.rank == rank) rj["temporal_breakdown"] = temporal_row_json(t);
  for (const auto& o : h.comm_comp_overlap)
    if (o.rank == rank) rj["comm_comp_overlap_pct"] = opt(o.comp_comm_overlap_pctg);
  // HTA writes one row per (stream, category); the schema wants one per stream.
  std::map<int64_t, ordered_json> streams;
  for (const auto& r : h.idle_time_breakdown) {
    if (r.rank != rank) continue;
    auto& s = streams[r.stream];
    if (s.is_null())
      s = {{"stream", r.stream},          {"host_wait_us", 0.0},         {"kernel_wait_us", 0.0},
           {"other_us", 0.0},             {"host_wait_ratio", nullptr},  {"kernel_wait_ratio", nullptr},
           {"other_ratio", nullptr}};
    s[r.idle_category + "_us"] = r.idle_time;
    s[r.idle_category + "_ratio"] = opt(r.idle_time_ratio);
  }
  ordered_json idle = ordered_json::array();
  for (auto& [stream, row] : streams) idle.push_back(std::move(row));
  rj["idle_breakdown"] = idle;
  rj["kernel_types"] = kernel_types_json(rank_kernel_types);
  ordered_json top = ordered_json::array();
  for (const auto& k : h.kernel_breakdown_top)
    if (k.rank == rank) top.push_back(top_row_json(k));
  rj["top_kernels"] = top;
}

}  // namespace stepscope::report
