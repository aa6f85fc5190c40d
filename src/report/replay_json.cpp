#include "report/replay_json.h"

namespace stepscope::report {

namespace {
double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }
}  // namespace

void emit_replay(JsonEmit& e, const whatif::RankReplay& r) {
  e.begin_object();
  e.member("replayed", r.replayed);
  e.member("host_marks", r.host_marks);
  e.member("gpu_nodes", r.gpu_nodes);
  e.key("edges");
  e.begin_object();
  for (int k = 0; k < whatif::kEdgeKindCount; ++k)
    e.member(whatif::to_string(static_cast<whatif::EdgeKind>(k)), r.edges[static_cast<size_t>(k)]);
  e.end();
  e.member("blocking_calls", r.blocking_calls);
  e.member("launch_latency_us", us(r.launch_latency_ns));
  e.member("stream_gap_us", us(r.stream_gap_ns));
  e.member("sync_release_us", us(r.sync_release_ns));
  e.member("gpu_residual_us", us(r.gpu_residual_ns));
  e.member("host_residual_us", us(r.host_residual_ns));
  e.member("max_abs_error_pct", r.max_abs_error_pct);
  e.key("steps");
  e.begin_array();
  for (const auto& s : r.steps) {
    e.begin_object();
    e.member("step", s.step);
    e.member("measured_us", us(s.measured_ns));
    e.member("replayed_us", us(s.replayed_ns));
    e.member("error_pct", s.error_pct());
    e.end();
  }
  e.end();
  const auto& u = r.unprofiled;
  e.key("unprofiled");
  e.begin_object();
  e.member("estimated", u.estimated);
  e.member("profiler_settings", {{"record_shapes", u.settings.shapes},
                                 {"profile_memory", u.settings.memory},
                                 {"with_stack", u.settings.stack},
                                 {"with_flops", u.settings.flops}});
  e.member("records", {{"cpu_ops", u.settings.cpu_ops},
                       {"runtime_calls", u.settings.runtime_calls},
                       {"memory_events", u.settings.memory_events},
                       {"python_events", u.settings.python_events}});
  e.member("profiled_step_us", us(u.profiled_step_ns));
  e.member("estimated_unprofiled_step_us", us(u.unprofiled_step_ns));
  e.member("profiler_cost_model_us_per_step", us(u.model_cost_ns));
  e.member("cost_scale", u.scale);
  e.member("calibrated", u.calibrated);
  using nlohmann::ordered_json;
  e.member("measured_unprofiled_step_ms",
           u.measured_step_ms ? ordered_json(*u.measured_step_ms) : ordered_json(nullptr));
  e.end();
  e.member("combined_saving_us",
           r.combined_saving_ns >= 0 ? ordered_json(us(r.combined_saving_ns)) : ordered_json(nullptr));
  e.member("notes", r.notes);
  e.end();
}

nlohmann::ordered_json replay_json(const whatif::RankReplay& r) {
  TreeEmit t;
  emit_replay(t, r);
  return t.take();
}

nlohmann::ordered_json job_replay_json(const whatif::JobReplay& r) {
  nlohmann::ordered_json j;
  j["ranks"] = r.ranks;
  j["replayed"] = r.replayed;
  j["collectives"] = r.collectives;
  j["collective_edges"] = r.collective_edges;
  j["unmatched_calls"] = r.unmatched_calls;
  j["steps"] = r.steps;
  j["max_abs_error_pct"] = r.max_abs_error_pct;
  j["notes"] = r.notes;
  return j;
}

}  // namespace stepscope::report
