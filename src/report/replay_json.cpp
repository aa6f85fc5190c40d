#include "report/replay_json.h"

namespace stepscope::report {

namespace {
double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }
}  // namespace

nlohmann::ordered_json replay_json(const whatif::RankReplay& r) {
  nlohmann::ordered_json j;
  j["replayed"] = r.replayed;
  j["host_marks"] = r.host_marks;
  j["gpu_nodes"] = r.gpu_nodes;
  nlohmann::ordered_json edges;
  for (int k = 0; k < whatif::kEdgeKindCount; ++k)
    edges[std::string(whatif::to_string(static_cast<whatif::EdgeKind>(k)))] = r.edges[static_cast<size_t>(k)];
  j["edges"] = edges;
  j["blocking_calls"] = r.blocking_calls;
  j["launch_latency_us"] = us(r.launch_latency_ns);
  j["stream_gap_us"] = us(r.stream_gap_ns);
  j["sync_release_us"] = us(r.sync_release_ns);
  j["gpu_residual_us"] = us(r.gpu_residual_ns);
  j["host_residual_us"] = us(r.host_residual_ns);
  j["max_abs_error_pct"] = r.max_abs_error_pct;
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (const auto& s : r.steps)
    steps.push_back({{"step", s.step}, {"measured_us", us(s.measured_ns)}, {"replayed_us", us(s.replayed_ns)},
                     {"error_pct", s.error_pct()}});
  j["steps"] = steps;
  const auto& u = r.unprofiled;
  nlohmann::ordered_json up;
  up["estimated"] = u.estimated;
  up["profiler_settings"] = {{"record_shapes", u.settings.shapes}, {"profile_memory", u.settings.memory},
                             {"with_stack", u.settings.stack}, {"with_flops", u.settings.flops}};
  up["records"] = {{"cpu_ops", u.settings.cpu_ops}, {"runtime_calls", u.settings.runtime_calls},
                   {"memory_events", u.settings.memory_events}, {"python_events", u.settings.python_events}};
  up["profiled_step_us"] = us(u.profiled_step_ns);
  up["estimated_unprofiled_step_us"] = us(u.unprofiled_step_ns);
  up["profiler_cost_model_us_per_step"] = us(u.model_cost_ns);
  up["cost_scale"] = u.scale;
  up["calibrated"] = u.calibrated;
  if (u.measured_step_ms) up["measured_unprofiled_step_ms"] = *u.measured_step_ms;
  else up["measured_unprofiled_step_ms"] = nullptr;
  j["unprofiled"] = up;
  if (r.combined_saving_ns >= 0) j["combined_saving_us"] = us(r.combined_saving_ns);
  else j["combined_saving_us"] = nullptr;
  j["notes"] = r.notes;
  return j;
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
